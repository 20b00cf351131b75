package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// TestRedAgentHandsOver holds a red agent run's handoff to its rule, the worktree as the run
// ended: the tools' writes as a diff against the base commit (a new file whole), the last verify
// round's output, said to be of that tree only where nothing was written after it; and no diff
// where the tools wrote nothing.
func TestRedAgentHandsOver(t *testing.T) {
	for _, tc := range []struct {
		name     string
		flags    map[string]string
		replies  []scripted.Reply
		kind     string
		diff     []string // lines the diff holds; none: no diff
		verified bool
		tail     bool
	}{
		{"the verify failed on the tools' writes", map[string]string{"verify-rounds": "0"}, []scripted.Reply{
			calls("read_file", `{"path":"a.txt"}`),
			calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye?"}`),
			calls("write_file", `{"path":"b.txt","content":"new\n"}`),
			calls("finish", `{"summary":"done"}`)},
			"red", []string{"--- a/a.txt\n+++ b/a.txt\n", "-hello\n+goodbye?\n", "--- a/b.txt\n+++ b/b.txt\n", "+new\n"}, true, true},
		{"turns ran out after a write the verify did not judge", map[string]string{"verify-rounds": "1", "max-turns": "4"}, []scripted.Reply{
			calls("read_file", `{"path":"a.txt"}`),
			calls("edit_file", `{"path":"a.txt","search":"hello","replace":"goodbye?"}`),
			calls("finish", `{"summary":"done"}`),
			calls("edit_file", `{"path":"a.txt","search":"goodbye?","replace":"good bye"}`)},
			"max_turns", []string{"-hello\n+good bye\n"}, false, true},
		{"the tools wrote nothing", map[string]string{"max-turns": "2"}, []scripted.Reply{
			calls("read_file", `{"path":"a.txt"}`), calls("read_file", `{"path":"a.txt"}`)},
			"max_turns", nil, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := gittest.Repo(t, map[string]string{"a.txt": "hello\n"})
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("lmstudio"))
			s.On("POST", "/v1/chat/completions", tc.replies...)
			p, err := packs.LoadBuiltin(packs.DefaultPack)
			require.NoError(t, err)
			flags := map[string]string{"base-url": s.BaseURL()}
			for k, v := range tc.flags {
				flags[k] = v
			}
			settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("agent", nil, flags)
			require.NoError(t, err)
			res := engine.Execute(context.Background(), engine.RunSpec{Mode: "agent", Root: root, Settings: settings, Model: runtest.Model,
				JournalPath: filepath.Join(t.TempDir(), "j.jsonl")},
				Steps(Options{Task: "say goodbye", Verify: "grep -qx goodbye a.txt || { echo FAIL; cat a.txt; exit 1; }", Root: root}))
			require.Equal(t, engine.StatusRed, res.Status, "%+v", res.Error)
			require.Equal(t, tc.kind, res.Error.Kind)
			h := res.Handoff
			require.NotNil(t, h)
			assert.Equal(t, HandoffRule, h.Rule)
			assert.Nil(t, h.Attempt)
			data, err := json.Marshal(h)
			require.NoError(t, err)
			assert.Equal(t, len(data), h.Bytes)
			assert.LessOrEqual(t, h.Bytes, engine.MaxHandoffBytes)
			t.Logf("handoff: %d bytes", h.Bytes)
			assert.Equal(t, tc.verified, h.Verified)
			assert.Equal(t, tc.tail, h.VerifyTail != nil)
			if tc.diff == nil {
				assert.Nil(t, h.Diff)
				require.NotNil(t, h.NoDiff)
				assert.Equal(t, "the model's tools changed no file", *h.NoDiff)
				return
			}
			require.NotNil(t, h.Diff)
			for _, l := range tc.diff {
				assert.Contains(t, *h.Diff, l)
			}
			applied, err := runtest.ApplyDiff((*h.Diff)[:strings.Index(*h.Diff+"--- a/b.txt", "--- a/b.txt")], "hello\n")
			require.NoError(t, err)
			assert.NotEqual(t, "hello\n", applied)
			for _, f := range h.Files() {
				assert.NotEmpty(t, f.Added, f.File)
			}
		})
	}
}
