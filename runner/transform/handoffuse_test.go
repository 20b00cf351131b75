package transform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// journalUses are the handoff_use events of the run's journal.
func journalUses(t *testing.T, root, run string) []engine.HandoffUseEvent {
	t.Helper()
	dir, err := engine.RunsDir(root)
	require.NoError(t, err)
	j, err := engine.LoadRun(dir, run, handoffKey)
	require.NoError(t, err)
	require.True(t, j.Sealed, "the journal stays sealed")
	var uses []engine.HandoffUseEvent
	for _, ev := range j.Events {
		if e, ok := engine.DecodeEvent[engine.HandoffUseEvent](ev); ok {
			uses = append(uses, e)
		}
	}
	return uses
}

// TestHandoffUseMeasuredAtTheNextRun: the next run that reads the file records in the red run's
// journal whether the host's edit since used the handoff: used where it applied the diff, unused
// where it made an edit of its own, and, where the host made none and this run edits the file,
// unused too; a run that only reads an unchanged file records nothing.
func TestHandoffUseMeasuredAtTheNextRun(t *testing.T) {
	attempts := []scripted.Reply{edit("return a * b"), edit("sum := a + b\n\treturn sum - 2*b"), noBlock()}
	for _, tc := range []struct {
		name     string
		hostEdit func(t *testing.T, h *engine.Handoff, file string) string
		want     *engine.HandoffUseEvent
	}{
		{"the host applied the handoff", func(t *testing.T, h *engine.Handoff, file string) string {
			applied, err := runtest.ApplyDiff(*h.Diff, file)
			require.NoError(t, err)
			return applied
		}, &engine.HandoffUseEvent{Use: engine.HandoffUsed, Source: engine.UseMeasured, Present: new(2), Of: new(2)}},
		{"the host made an edit of its own", func(_ *testing.T, _ *engine.Handoff, file string) string {
			return strings.Replace(file, "return a - b", "return b + a", 1)
		}, &engine.HandoffUseEvent{Use: engine.HandoffUnused, Source: engine.UseMeasured, Present: new(0), Of: new(2)}},
		{"the host delegated again at once", nil, &engine.HandoffUseEvent{Use: engine.HandoffUnused, Source: engine.UseMeasured, Present: new(0), Of: new(2),
			Why: "the next run on the file found it as the red run left it"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			red, root := redTransform(t, handoffKey, attempts...)
			require.NotNil(t, red.Handoff)
			require.NotNil(t, red.Handoff.Diff)
			require.Equal(t, 2, *red.Handoff.Attempt)
			if tc.hostEdit != nil {
				path := filepath.Join(root, "calc.go")
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(path, []byte(tc.hostEdit(t, red.Handoff, string(data))), 0o644))
			}
			assert.Empty(t, journalUses(t, root, red.RunID), "nothing recorded before a later run reads the file")
			next := runIn(t, root, handoffKey, "", edit("return a + b"))
			uses := journalUses(t, root, red.RunID)
			require.Len(t, uses, 1)
			want := *tc.want
			want.By = next.RunID
			assert.Equal(t, want, uses[0])
			// A later run records nothing more: the first measure stands.
			runIn(t, root, handoffKey, "", edit("return a + b"))
			assert.Len(t, journalUses(t, root, red.RunID), 1)
		})
	}
}
