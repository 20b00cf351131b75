package transform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// TestHostTurns holds a transform's turns to what a host doing it itself takes: the span read
// (unless it holds it), the edit and the verify, and an edit and a verify more per red round the
// run needed; against one call, and one turn more where the compact diff sends it to git diff.
func TestHostTurns(t *testing.T) {
	answer := func(body string) scripted.Reply {
		a := "```go\n" + body + "\n```"
		return scripted.Reply{StreamAnswer: &a}
	}
	for _, tc := range []struct {
		name    string
		replies []scripted.Reply
		flags   map[string]string
		span    int
		done    bool
		turns   cost.Turns
	}{
		{"kept at once", []scripted.Reply{answer("b")}, nil, 1, true, cost.Turns{Direct: 3, Delegated: 1}},
		{"kept after a red round", []scripted.Reply{answer("wrong"), answer("b")}, nil, 1, true, cost.Turns{Direct: 5, Delegated: 1}},
		{"kept, the host holding the span", []scripted.Reply{answer("b")}, map[string]string{"host-holds-span": "true"}, 1, true, cost.Turns{Direct: 2, Delegated: 1}},
		{"red: the job still to do", []scripted.Reply{answer("wrong"), answer("wrong again"), answer("still wrong")}, nil, 1, false, cost.Turns{Direct: 3, Delegated: 1}},
		{"kept, the diff cut: the host reads it in a turn more", []scripted.Reply{answer(strings.Repeat("b\n", 60) + "b")}, nil, 60, true, cost.Turns{Direct: 3, Delegated: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("lmstudio"))
			s.On("POST", "/v1/chat/completions", tc.replies...)
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), []byte(strings.Repeat("a\n", tc.span)), 0o644))
			flags := map[string]string{"base-url": s.BaseURL(), "mutants": "0"}
			for k, v := range tc.flags {
				flags[k] = v
			}
			spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(t, "transform", flags), Model: runtest.Model, Routing: "operator",
				JournalPath: filepath.Join(root, "run.jsonl"), Host: &engine.HostSide{CallBytes: 100, ResultBytes: func(*engine.Result) int64 { return 200 }}}
			res := engine.Execute(context.Background(), spec, Steps(Options{File: "a.go", Verify: "grep -qx b a.go", Task: "make it b", Cwd: root, Root: root}))
			require.NotNil(t, res.Host, "%+v", res.Error)
			assert.Equal(t, tc.done, res.Host.Parts.Done)
			assert.Equal(t, tc.turns, res.Host.Parts.Turns)
		})
	}
}
