package transform

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

const handoffCalc = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n\n// end\n"

// handoffVerify fails until Add adds, and shows the line it judged.
const handoffVerify = `grep -q "return a + b" calc.go || { echo "FAIL: Add does not add:"; grep -n "return" calc.go; exit 1; }`

func edit(body string) scripted.Reply {
	a := "```go\nfunc Add(a, b int) int {\n\t" + body + "\n}\n```"
	return scripted.Reply{StreamAnswer: &a}
}

func noBlock() scripted.Reply {
	a := "Sure: change the minus to a plus."
	return scripted.Reply{StreamAnswer: &a}
}

// redTransform runs a transform of Add in a repository of its own against replies, its journal
// sealed under key, and returns the result and the repository.
func redTransform(t *testing.T, key []byte, replies ...scripted.Reply) (*engine.Result, string) {
	t.Helper()
	root := gittest.Repo(t, map[string]string{"calc.go": handoffCalc})
	return runIn(t, root, key, "3-5", replies...), root
}

// runIn runs a transform of lines in root against replies.
func runIn(t *testing.T, root string, key []byte, lines string, replies ...scripted.Reply) *engine.Result {
	t.Helper()
	s := scripted.New()
	t.Cleanup(s.Close)
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", replies...)
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(t, "transform", map[string]string{"base-url": s.BaseURL(), "mutants": "0", "max-attempts": "3"}),
		Model: runtest.Model, Routing: "operator", JournalKey: func() ([]byte, error) { return key, nil },
		Host: &engine.HostSide{CallBytes: 100, ResultBytes: func(r *engine.Result) int64 {
			data, _ := json.Marshal(r)
			return int64(len(data))
		}}}
	return engine.Execute(context.Background(), spec, Steps(Options{File: "calc.go", Lines: lines, Verify: handoffVerify, Task: "make Add add", Cwd: root, Root: root}))
}

var handoffKey = bytes.Repeat([]byte{9}, 32)

// TestRedTransformHandsOver holds a red transform's handoff to its rule, the last attempt whose
// edit the verify judged: not the last reply where that one never reached the verify (it could
// not be applied, or repeated a rejected edit), and none where no reply did; its diff, applied to
// the file as the run left it, is that attempt's file; and the result, with the handoff, within
// its bound and the result schema.
func TestRedTransformHandsOver(t *testing.T) {
	v, err := schema.New()
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		replies []scripted.Reply
		kind    string
		attempt int    // 0: no attempt reached the verify
		added   string // the line the handoff's diff adds
		noDiff  string
	}{
		{"the last reply could not be applied", []scripted.Reply{edit("return a * b"), edit("return b - a"), noBlock()}, "red", 2, "+\treturn b - a", ""},
		{"the last reply repeated a rejected edit", []scripted.Reply{edit("return a * b"), edit("return b - a"), edit("return a * b")}, "red", 2, "+\treturn b - a", ""},
		{"every reply judged: the last", []scripted.Reply{edit("return a * b"), edit("return b - a"), edit("return a / b")}, "red", 3, "+\treturn a / b", ""},
		{"no reply could be applied", []scripted.Reply{noBlock(), noBlock(), noBlock()}, "red", 0, "", "no reply could be applied as an edit, so none reached the file"},
		{"every reply left the span", []scripted.Reply{edit("return a - b"), edit("return a - b"), edit("return a - b")}, "unchanged", 0, "", "every reply left the span as it was, so none reached the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, root := redTransform(t, handoffKey, tc.replies...)
			require.Equal(t, engine.StatusRed, res.Status, "%+v", res.Error)
			require.Equal(t, tc.kind, res.Error.Kind)
			h := res.Handoff
			require.NotNil(t, h)
			assert.Equal(t, tc.kind, h.Failure)
			assert.Equal(t, HandoffRule, h.Rule)
			assert.LessOrEqual(t, h.Bytes, engine.MaxHandoffBytes)
			own, err := json.Marshal(h)
			require.NoError(t, err)
			assert.Equal(t, len(own), h.Bytes)
			t.Logf("handoff: %d bytes", h.Bytes)

			data, err := json.Marshal(res)
			require.NoError(t, err)
			_, err = v.Validate(schema.Result, "result", data)
			require.NoError(t, err, "%s", data)
			// The handoff's bytes are counted on the delegation's side, apart from the result's.
			require.NotNil(t, res.Host)
			assert.Equal(t, int64(h.Bytes), res.Host.Parts.Handoff)
			// The result is measured once, with a provisional estimate in it: a figure or two wide.
			assert.InDelta(t, len(data)-h.Bytes, res.Host.Parts.Result, 8)

			file, err := os.ReadFile(filepath.Join(root, "calc.go"))
			require.NoError(t, err)
			require.Equal(t, handoffCalc, string(file), "the file is restored")
			if tc.attempt == 0 {
				assert.Nil(t, h.Attempt)
				assert.Nil(t, h.Diff)
				assert.Nil(t, h.VerifyTail)
				assert.False(t, h.Verified)
				require.NotNil(t, h.NoDiff)
				assert.Equal(t, tc.noDiff, *h.NoDiff)
				assert.Empty(t, h.Files())
				return
			}
			require.NotNil(t, h.Attempt)
			assert.Equal(t, tc.attempt, *h.Attempt)
			require.NotNil(t, h.Diff)
			assert.Nil(t, h.NoDiff)
			assert.True(t, strings.HasPrefix(*h.Diff, "--- a/calc.go\n+++ b/calc.go\n@@ -1,7 +1,7 @@\n"), "%q", *h.Diff)
			assert.Contains(t, *h.Diff, "\n-\treturn a - b\n"+tc.added+"\n")
			assert.Equal(t, 1, strings.Count(*h.Diff, "\n+\t"), "one line added: the attempt's own")
			require.True(t, h.Verified)
			require.NotNil(t, h.VerifyTail)
			// The tail is the verify's on that attempt: it shows the line the attempt wrote.
			assert.Contains(t, *h.VerifyTail, strings.TrimPrefix(tc.added, "+\t"))
			applied, err := runtest.ApplyDiff(*h.Diff, string(file))
			require.NoError(t, err)
			assert.Contains(t, applied, strings.TrimPrefix(tc.added, "+"))
			require.Len(t, h.Files(), 1)
			assert.Equal(t, "calc.go", h.Files()[0].File)
			assert.Len(t, h.Files()[0].Added, 1)
		})
	}
}
