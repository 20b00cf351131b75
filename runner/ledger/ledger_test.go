package ledger

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// The modes the ledger's tests see: registered here, since no mode package may be imported by
// the ledger, tests included. Their priors are the shipped modes' own.
func init() {
	engine.RegisterMode(engine.Mode{Name: "transform", Model: engine.ChatModel, Prior: cost.EditPrior(), Unit: "span lines"})
	engine.RegisterMode(engine.Mode{Name: "summarize", Model: engine.ChatModel, Prior: cost.ReadPrior(8, 1000), Unit: "span lines"})
	engine.RegisterMode(engine.Mode{Name: "agent", Model: engine.ChatModel})
}

const runs = "testdata/runs"

func read(t *testing.T, f Filter) []Entry {
	t.Helper()
	entries, unreadable, err := Read(runs, f)
	require.NoError(t, err)
	assert.Zero(t, unreadable)
	return entries
}

// TestRecordedRuns pins the arithmetic on recorded runs of every outcome: each run's parts, at 4
// bytes a token over its 10 turns left at claude's prices, give the net the ledger counts.
func TestRecordedRuns(t *testing.T) {
	byRun := map[string]Entry{}
	for _, e := range read(t, Filter{}) {
		byRun[e.Run] = e
	}
	p := cost.Defaults()
	for _, tc := range []struct {
		run, outcome string
		saved        cost.Side
		carried, net int64
	}{
		{"20261123T100000Z-000001", "kept", cost.Side{In: -37, Out: -15}, -520, -572},
		{"20261123T110000Z-000002", "red", cost.Side{In: -100, Out: -30}, -1300, -1430},
		{"20261124T100000Z-000003", "refused", cost.Side{In: -95, Out: -28}, -1230, -1353},
		{"20261125T100000Z-000004", "repeated", cost.Side{In: -105, Out: -30}, -1350, -1485},
		{"20261130T100000Z-000005", "unchanged", cost.Side{In: -75, Out: -30}, -1050, -1155},
		{"20261130T110000Z-000006", "a kept digest", cost.Side{In: 2725, Out: -25}, 27000, 29700},
		{"20261201T100000Z-000007", "an accepted agent run", cost.Side{In: 25, Out: 40}, 650, 715},
		{"20261201T110000Z-000008", "a screen with no turns left", cost.Side{In: 9775, Out: -15}, 0, 9760},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			e, ok := byRun[tc.run]
			require.True(t, ok)
			require.True(t, e.Costed)
			est := e.Estimate(p)
			assert.Equal(t, tc.saved, est.Saved)
			assert.Equal(t, tc.carried, est.Carried)
			assert.Equal(t, tc.net, est.Net, "the journal's own net_tokens (999999) is not taken")
		})
	}
	red := byRun["20261123T110000Z-000002"]
	assert.False(t, red.Kept())
	assert.Equal(t, "red", red.Kind)
	assert.Equal(t, cost.Side{In: 38, Out: 38}, red.Estimate(p).Todo, "a red run leaves the job to do")
	assert.Equal(t, "accepted", byRun["20261201T100000Z-000007"].Verdict)
	assert.Equal(t, 200, byRun["20261124T100000Z-000003"].SpanLines)
	assert.False(t, byRun["20261122T100000Z-000009"].Costed, "a journal from before the estimate")
}

func TestSumByMode(t *testing.T) {
	l, err := Sum(read(t, Filter{}), "mode", cost.Defaults())
	require.NoError(t, err)
	rows := map[string]Row{}
	for _, r := range l.Rows {
		rows[r.Key] = r
	}
	tr := rows["transform"]
	assert.Equal(t, 6, tr.Runs)
	assert.Equal(t, 2, tr.Kept)
	assert.Equal(t, 5, tr.Costed)
	assert.Equal(t, int64(-572-1430-1353-1485-1155), tr.Net, "a losing mode shows as a loss")
	assert.Nil(t, tr.RightRate, "no transform was judged")
	ag := rows["agent"]
	require.NotNil(t, ag.RightRate)
	assert.InDelta(t, 1.0, *ag.RightRate, 1e-9)
	assert.Equal(t, 9, l.Total.Runs)
	assert.Equal(t, 1, l.Uncosted)
	assert.Equal(t, int64(-5995+29700+715+9760), l.Total.Net)
	assert.Equal(t, int64(2400+7100+12+5200+3000+1800), tr.LocalMs)
}

func TestSumByWeekShowsALosingWeek(t *testing.T) {
	l, err := Sum(read(t, Filter{}), "week", cost.Defaults())
	require.NoError(t, err)
	var keys []string
	for _, r := range l.Rows {
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"2026-W47", "2026-W48", "2026-W49"}, keys)
	assert.Equal(t, int64(-572-1430-1353-1485), l.Rows[1].Net, "the week of red transforms is a loss")
	_, err = Sum(nil, "colour", cost.Defaults())
	assert.ErrorContains(t, err, "want one of model, mode, role, week")
}

func TestSinceAndMode(t *testing.T) {
	since, _ := time.Parse(time.RFC3339, "2026-11-30T00:00:00Z")
	assert.Len(t, read(t, Filter{Since: since}), 4)
	assert.Len(t, read(t, Filter{Mode: "transform"}), 6)
	assert.Len(t, read(t, Filter{Newest: 2}), 2)
}

func TestBreakEvenFromTheLedgerAndThePrior(t *testing.T) {
	rules := BreakEven(read(t, Filter{}), cost.Defaults())
	got := map[string]cost.Rule{}
	for _, r := range rules {
		got[r.Mode+"/"+r.Role] = r
	}
	tr := got["transform/code"]
	assert.Equal(t, "ledger", tr.History.Basis, "five costed runs replace the prior")
	assert.InDelta(t, 0.2, tr.KeepRate, 1e-9)
	require.NotNil(t, tr.PaysAbove)
	assert.Equal(t, int64(66), *tr.PaysAbove)
	assert.True(t, tr.Stop)
	assert.Equal(t, "its last 5 runs kept 1 and cost the host 5995 tokens net (estimated)", tr.Why)

	sum := got["summarize/prose"]
	assert.Equal(t, "prior", sum.History.Basis, "one run is not a history")
	assert.False(t, sum.Stop)
	require.NotNil(t, sum.PaysAbove)
	_, hasAgent := got["agent/agent"]
	assert.False(t, hasAgent, "the agent has no break-even by size")

	// No journal at all: each mode's prior, for no role in particular.
	rules = BreakEven(nil, cost.Defaults())
	require.Len(t, rules, 2)
	assert.Equal(t, "transform for role code pays from 21 span lines at a 50% keep rate (prior)", cost.Rule{Mode: "transform", Role: "code", Unit: "span lines", PaysAbove: rules[1].PaysAbove, KeepRate: rules[1].KeepRate, History: rules[1].History}.Words())
}

func TestGate(t *testing.T) {
	rules := BreakEven(read(t, Filter{}), cost.Defaults())
	err := Gate(rules, "transform", "code", 5)
	require.Error(t, err)
	status, kind, code := engine.Classify(err)
	assert.Equal(t, engine.StatusRefused, status)
	assert.Equal(t, KindDoesNotPay, kind)
	assert.Equal(t, 1, code)
	assert.Contains(t, err.Error(), "a transform for role code of 5 span lines does not pay: its last 5 runs kept 1")
	assert.Contains(t, err.Error(), "it pays from 66 span lines")
	assert.Contains(t, err.Error(), "--delegate-when")
	assert.NoError(t, Gate(rules, "transform", "code", 66), "a span at the break-even pays")
	assert.NoError(t, Gate(rules, "transform", "other", 1), "another role has its own history")
	assert.NoError(t, Gate(rules, "summarize", "prose", 1), "a role that is not losing is not stopped")
}

// Refusals for cost are left out of the history: they measured nothing, and counting them would
// keep a stopped role stopped for good.
func TestDoesNotPayRefusalsAreNotHistory(t *testing.T) {
	entries := read(t, Filter{Mode: "transform"})
	for range 20 {
		entries = append(entries, Entry{Mode: "transform", Role: "code", Status: "REFUSED", Kind: KindDoesNotPay, Costed: true, Parts: cost.Parts{Call: 120, Result: 300}})
	}
	for _, r := range BreakEven(entries, cost.Defaults()) {
		if r.Mode == "transform" {
			assert.Equal(t, "its last 5 runs kept 1 and cost the host 5995 tokens net (estimated)", r.Why)
		}
	}
}

func TestReadSkipsWhatIsNoJournal(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(runs, "20261123T100000Z-000001.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("not json\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "c.jsonl")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o755))
	entries, unreadable, err := Read(dir, Filter{})
	require.NoError(t, err)
	assert.Len(t, entries, 1)
	assert.Equal(t, 1, unreadable, "the file that is not a journal; a link and a folder are not read at all")
	entries, _, err = Read(filepath.Join(dir, "none"), Filter{})
	require.NoError(t, err)
	assert.Empty(t, entries)
}

func TestFromEventsDistrustsFigures(t *testing.T) {
	e, ok := FromEvents("r", []map[string]any{
		{"event": "run_start", "mode": "transform"},
		{"event": "run_end", "status": "OK", "wall_ms": -5.0, "details": map[string]any{"lines": "9-3"},
			"host": map[string]any{"params": map[string]any{"turns_left": 1e300}, "parts": map[string]any{"read_bytes": 1.5, "call_bytes": -1.0, "result_bytes": "7", "done": true}}},
		{"event": "verdict", "verdict": "maybe"},
	})
	require.True(t, ok)
	assert.True(t, e.Costed)
	assert.Equal(t, cost.Parts{Done: true}, e.Parts)
	assert.Zero(t, e.TurnsLeft)
	assert.Zero(t, e.LocalMs)
	assert.Zero(t, e.SpanLines)
	assert.Empty(t, e.Verdict)
	_, ok = FromEvents("r", []map[string]any{{"event": "run_end"}})
	assert.False(t, ok, "no run_start: not a run's journal")
}
