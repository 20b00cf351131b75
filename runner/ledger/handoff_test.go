package ledger

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// handoffRun is a red transform's journal in dir, sealed under key: its handoff of the attempt on
// file (which made it attempt from before), the host's side with the handoff's bytes, and any
// word on its use appended after it ended.
type handoffRun struct {
	id, file        string
	before, attempt string
	parent          bool
	uses            []engine.HandoffUseEvent
	// now is the file in the repository when the ledger reads it; "" is before.
	now string
}

func (h handoffRun) write(t *testing.T, dir string) *engine.Handoff {
	t.Helper()
	path := filepath.Join(dir, h.id+".jsonl")
	j, err := engine.OpenJournal(path, h.id)
	require.NoError(t, err)
	j.Seal(key)
	start := engine.RunStartEvent{Mode: "transform", Model: "qwen"}
	if h.parent {
		start.Parent = &engine.ParentRun{Run: "20261201T000000Z-ffffff", Step: "edit", Item: h.file}
	}
	j.Emit(start)
	ho := engine.NewHandoff("red", engine.HandoffDraft{Rule: "the last attempt whose edit the verify judged", Attempt: new(1),
		Diff: engine.UnifiedDiff(h.file, h.before, h.attempt), Verified: true, VerifyTail: new("FAIL\n"), Next: "do it",
		Files: []engine.HandoffFile{engine.HandoffFileOf(h.file, []byte(h.before), []byte(h.attempt))}})
	j.Emit(engine.HandoffEvent{Handoff: ho, Files: ho.Files()})
	parts := cost.Parts{Read: 40, Write: 20, Call: 100, Result: 300, Handoff: int64(ho.Bytes), Turns: cost.Turns{Direct: 3, Delegated: 1}}
	est := cost.Of(parts, cost.Defaults())
	j.Emit(engine.RunEndEvent{Status: engine.StatusRed, ExitCode: 1, Error: &engine.ErrorInfo{Kind: "red", Message: "red"}, Host: &est})
	require.NoError(t, j.Close())
	for _, u := range h.uses {
		require.NoError(t, engine.AppendEvent(path, h.id, u, key))
	}
	return ho
}

// TestLedgerCountsHandoffs sums red runs' handoffs: their bytes, counted in what the delegation
// cost the host, and what became of each by its mark, the measure a later run recorded, or the
// file as it stands; a workflow item's is its workflow's, not counted again.
func TestLedgerCountsHandoffs(t *testing.T) {
	const before = "package a\n\nfunc F() int {\n\treturn 1\n}\n"
	const attempt = "package a\n\nfunc F() int {\n\tn := 2\n\treturn n\n}\n"
	mark := engine.HandoffUseEvent{Use: engine.HandoffUsed, Source: engine.UseMarked}
	measured := engine.HandoffUseEvent{Use: engine.HandoffUnused, Source: engine.UseMeasured, Present: new(0), Of: new(2), By: "x"}
	runs := []handoffRun{
		{id: "20261201T100000Z-000001", file: "a.go", before: before, attempt: attempt, now: attempt},
		{id: "20261201T100000Z-000002", file: "b.go", before: before, attempt: attempt, uses: []engine.HandoffUseEvent{measured}, now: attempt},
		{id: "20261201T100000Z-000003", file: "c.go", before: before, attempt: attempt, uses: []engine.HandoffUseEvent{measured, mark}},
		{id: "20261201T100000Z-000004", file: "d.go", before: before, attempt: attempt},
		{id: "20261201T100000Z-000005", file: "e.go", before: before, attempt: attempt, now: "package a\n"},
		{id: "20261201T100000Z-000006", file: "f.go", before: before, attempt: attempt, parent: true, now: attempt},
	}
	dir, root := t.TempDir(), t.TempDir()
	bytes := map[string]int64{}
	var total int64
	for _, r := range runs {
		h := r.write(t, dir)
		bytes[r.id] = int64(h.Bytes)
		if !r.parent {
			total += int64(h.Bytes)
		}
		now := r.now
		if now == "" {
			now = r.before
		}
		require.NoError(t, os.WriteFile(filepath.Join(root, r.file), []byte(now), 0o644))
	}

	for _, tc := range []struct {
		name string
		root string
		want map[string]engine.HandoffUse
		row  [3]int // used, unused, unknown
	}{
		{"measured on the repository", root, map[string]engine.HandoffUse{
			"20261201T100000Z-000001": {Use: engine.HandoffUsed, Source: engine.UseMeasuredNow, Present: 2, Of: 2},
			"20261201T100000Z-000002": {Use: engine.HandoffUnused, Source: engine.UseMeasured, Of: 2},
			"20261201T100000Z-000003": {Use: engine.HandoffUsed, Source: engine.UseMarked},
			"20261201T100000Z-000004": {Use: engine.HandoffUnknown, Source: engine.UseMeasuredNow, Of: 2, Why: "the file is as the run left it"},
			"20261201T100000Z-000005": {Use: engine.HandoffUnused, Source: engine.UseMeasuredNow, Of: 2},
		}, [3]int{2, 2, 1}},
		{"no repository to measure on: only what the journals record", "", map[string]engine.HandoffUse{
			"20261201T100000Z-000001": {Use: engine.HandoffUnknown, Why: "not measured"},
			"20261201T100000Z-000002": {Use: engine.HandoffUnused, Source: engine.UseMeasured, Of: 2},
			"20261201T100000Z-000003": {Use: engine.HandoffUsed, Source: engine.UseMarked},
			"20261201T100000Z-000004": {Use: engine.HandoffUnknown, Why: "not measured"},
			"20261201T100000Z-000005": {Use: engine.HandoffUnknown, Why: "not measured"},
		}, [3]int{1, 1, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entries, left, err := Read(dir, key, Filter{Root: tc.root})
			require.NoError(t, err)
			assert.Zero(t, left, "every journal stays sealed")
			require.Len(t, entries, len(runs))
			for _, e := range entries {
				want, ok := tc.want[e.Run]
				if !ok {
					assert.Nil(t, e.Handoff, "a workflow item's handoff is its workflow's: %s", e.Run)
					continue
				}
				require.NotNil(t, e.Handoff, e.Run)
				assert.Equal(t, want, e.Handoff.HandoffUse, e.Run)
				assert.Equal(t, bytes[e.Run], e.Handoff.Bytes, e.Run)
				assert.Equal(t, "red", e.Handoff.Failure)
				// The handoff is read with the result: the delegation's cost.
				assert.Equal(t, bytes[e.Run], e.Parts.Handoff)
				p := cost.Defaults()
				assert.Equal(t, p.Tokens(300)+p.Tokens(bytes[e.Run]), e.Estimate(p).Delegation.In)
			}
			l, err := Sum(entries, "mode", cost.Defaults())
			require.NoError(t, err)
			r := l.Total
			assert.Equal(t, 5, r.Handoffs)
			assert.Equal(t, total, r.HandoffBytes)
			assert.Equal(t, tc.row, [3]int{r.HandoffsUsed, r.HandoffsUnused, r.HandoffsUnknown})
			assert.Contains(t, l.Method.Handoffs, engine.HandoffUseRule)
		})
	}
}
