package evals

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/evidence"
)

// The handoff task grades the job the handoff mode asks of the role that runs both (prose): a
// handoff in the mode's shape of the task's own log, as the mode prints what a host may act on,
// passes the task's predicate; the same handoff with the item that keeps a fact unsupported by
// its lines fails it, naming that fact. A handoff the mode would not trust cannot earn the role.
func TestHandoffTaskGradesWhatTheModeKeeps(t *testing.T) {
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	roles := (&packs.Composition{Packs: []*packs.Pack{p}}).Roles()
	var role string
	require.NoError(t, json.Unmarshal(p.Manifest.Contributes.Modes["handoff"][packs.RoleSetting.String()], &role))
	assert.Equal(t, "prose", role)
	assert.Contains(t, roles[role].Tasks, "handoff", "the role the handoff mode runs under is earned by the handoff task")

	reply := `{"handoff": [
	 {"section": "work", "text": "Stop the run journal growing forever on branch fix/journal-rotation.", "quote": "fix/journal-rotation", "lines": [1, 1]},
	 {"section": "done", "text": "Decided to keep the newest 200 journals and prune the rest at run start.", "quote": "keep the newest 200 journals", "lines": [4, 4]},
	 {"section": "open", "text": "TestListRunsEmptyDir fails: ListRuns errors on a missing directory.", "quote": "TestListRunsEmptyDir", "lines": [8, 9]},
	 {"section": "files", "text": "Uncommitted changes to runner/journal.go, runner/journal_test.go and README.md.", "quote": "nothing committed yet", "lines": [10, 11]},
	 {"section": "next", "text": "Make ListRuns treat a missing dir as no runs, then commit.", "quote": "make ListRuns treat a missing directory as no runs", "lines": [12, 12]}
	]}`
	items, err := evidence.ParseHandoff(reply)
	require.NoError(t, err)
	text := evidence.Whole(strings.Split(strings.TrimSuffix(handoffFixture, "\n"), "\n"))
	gated := evidence.GateHandoff(items, text, evidence.MaxClaims(120))
	for _, it := range gated {
		require.True(t, it.Supported(), "%s: %s", it.Text, it.Reason)
	}
	kept := evidence.SupportedLines(gated)
	g := gradeHandoff(kept)
	assert.True(t, g.Passed, "the mode's handoff fails the task: %v\n%s", g.Evidence, kept)

	// The failing test's item cites a quote the log does not hold: the gate drops it, and the
	// task then fails for the fact it carried.
	items[2].Quote = "TestListRunsMissingDir"
	items[2].Text = "TestListRunsMissingDir fails."
	gated = evidence.GateHandoff(items, text, evidence.MaxClaims(120))
	assert.False(t, gated[2].Supported())
	g = gradeHandoff(evidence.SupportedLines(gated))
	assert.False(t, g.Passed)
	assert.Contains(t, strings.Join(g.Evidence, "\n"), "drops the failing test")
}
