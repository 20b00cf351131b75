package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// key is the operator's key in these tests.
var key = bytes.Repeat([]byte{7}, 32)

// sealedRuns is a copy of the recorded runs in testdata/runs, each sealed under key as the run
// that wrote it would have sealed it.
func sealedRuns(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	names, err := filepath.Glob("testdata/runs/*.jsonl")
	require.NoError(t, err)
	for _, src := range names {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		dst := filepath.Join(dir, filepath.Base(src))
		require.NoError(t, os.WriteFile(dst, data, 0o644))
		require.NoError(t, engine.SealJournal(dst, strings.TrimSuffix(filepath.Base(src), ".jsonl"), key))
	}
	return dir
}

func read(t *testing.T, f Filter) []Entry {
	t.Helper()
	entries, left, err := Read(sealedRuns(t), key, f)
	require.NoError(t, err)
	assert.Zero(t, left)
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
		carried      int64
		turns        int64 // saved net: done directly less delegated
		net          int64
	}{
		{"20261123T100000Z-000001", "kept: three turns done directly against one call", cost.Side{In: -37, Out: -15}, -520, 2, -572 + 2*44000},
		{"20261123T110000Z-000002", "red: the call's turn lost, the job still to do", cost.Side{In: -100, Out: -30}, -1300, -1, -1430 - 44000},
		{"20261124T100000Z-000003", "refused", cost.Side{In: -95, Out: -28}, -1230, -1, -1353 - 44000},
		{"20261125T100000Z-000004", "repeated", cost.Side{In: -105, Out: -30}, -1350, -1, -1485 - 44000},
		{"20261130T100000Z-000005", "unchanged", cost.Side{In: -75, Out: -30}, -1050, -1, -1155 - 44000},
		{"20261130T110000Z-000006", "a kept digest: a turn each way, the span kept out of the context", cost.Side{In: 2725, Out: -25}, 27000, 0, 29700},
		{"20261201T100000Z-000007", "an accepted agent run: its review and accept cost the turns it saved", cost.Side{In: 25, Out: 40}, 650, 0, 715},
		{"20261201T110000Z-000008", "a screen with no turns left", cost.Side{In: 9775, Out: -15}, 0, 0, 9760},
		{"20261201T120000Z-000010", "red again", cost.Side{In: -95, Out: -30}, -1250, -1, -1375 - 44000},
	} {
		t.Run(tc.outcome, func(t *testing.T) {
			e, ok := byRun[tc.run]
			require.True(t, ok)
			require.True(t, e.Costed)
			est := e.Estimate(p)
			assert.Equal(t, tc.saved, est.Saved)
			assert.Equal(t, tc.carried, est.Carried)
			assert.Equal(t, tc.turns, est.TurnsSaved)
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
	assert.Equal(t, 3, red.Asked)
	assert.Zero(t, byRun["20261124T100000Z-000003"].Asked, "refused for the context: the model was never asked")
	assert.False(t, Counts(byRun["20261124T100000Z-000003"]))
}

func TestSumByMode(t *testing.T) {
	l, err := Sum(read(t, Filter{}), "mode", cost.Defaults())
	require.NoError(t, err)
	rows := map[string]Row{}
	for _, r := range l.Rows {
		rows[r.Key] = r
	}
	tr := rows["transform"]
	assert.Equal(t, 7, tr.Runs)
	assert.Equal(t, 2, tr.Kept)
	assert.Equal(t, 6, tr.Costed)
	assert.Equal(t, int64(-572-1430-1353-1485-1155-1375-3*44000), tr.Net, "two kept of seven: a losing mode shows as a loss")
	assert.Equal(t, int64(2-5), tr.TurnsSaved)
	assert.Nil(t, tr.RightRate, "no transform was judged")
	ag := rows["agent"]
	require.NotNil(t, ag.RightRate)
	assert.InDelta(t, 1.0, *ag.RightRate, 1e-9)
	assert.Equal(t, 10, l.Total.Runs)
	assert.Equal(t, 1, l.Uncosted)
	assert.Equal(t, int64(-7370-3*44000+29700+715+9760), l.Total.Net)
	assert.Equal(t, int64(2400+7100+12+5200+3000+1800+6500), tr.LocalMs)
}

func TestSumByWeekShowsALosingWeek(t *testing.T) {
	l, err := Sum(read(t, Filter{}), "week", cost.Defaults())
	require.NoError(t, err)
	var keys []string
	for _, r := range l.Rows {
		keys = append(keys, r.Key)
	}
	assert.Equal(t, []string{"2026-W47", "2026-W48", "2026-W49"}, keys)
	assert.Equal(t, int64(-572-1430-1353-1485+2*44000-3*44000), l.Rows[1].Net, "the week of red transforms is a loss")
	_, err = Sum(nil, "colour", cost.Defaults())
	assert.ErrorContains(t, err, "want one of model, mode, role, week")
}

func TestSinceAndMode(t *testing.T) {
	since, _ := time.Parse(time.RFC3339, "2026-11-30T00:00:00Z")
	assert.Len(t, read(t, Filter{Since: since}), 5)
	assert.Len(t, read(t, Filter{Mode: "transform"}), 7)
	assert.Len(t, read(t, Filter{Journals: 2}), 2)
	newest := read(t, Filter{Mode: "transform", Limit: 2})
	require.Len(t, newest, 2, "the newest two transforms, oldest first")
	assert.Equal(t, "20261130T100000Z-000005", newest[0].Run)
}

func TestBreakEvenFromTheLedgerAndThePrior(t *testing.T) {
	rules := BreakEven(read(t, Filter{}), cost.Defaults())
	got := map[string]cost.Rule{}
	for _, r := range rules {
		got[r.Mode+"/"+r.Role+"/"+r.Model] = r
	}
	tr := got["transform/code/qwen2.5-coder-1.5b"]
	assert.Equal(t, "ledger", tr.History.Basis, "five runs that asked the model replace the prior; the refusal for the context is not one")
	assert.Equal(t, 5, tr.History.Runs)
	assert.InDelta(t, 0.2, tr.KeepRate, 1e-9)
	require.NotNil(t, tr.PaysAbove)
	assert.Equal(t, int64(392), *tr.PaysAbove, "at one kept in five the turns a kept edit saves do not pay for the calls: the span must")
	assert.True(t, tr.Stop)
	assert.Equal(t, tr.PaysAbove, tr.StopBelow)
	assert.Equal(t, "its last 5 runs kept 1: at that rate a run of 1 span line is expected to cost the host $0.0063 (estimated)", tr.Why)

	sum := got["summarize/prose/qwen2.5-coder-1.5b"]
	assert.Equal(t, "prior", sum.History.Basis, "one run is not a history")
	assert.False(t, sum.Stop)
	require.NotNil(t, sum.PaysAbove)
	for k := range got {
		assert.NotContains(t, k, "agent/", "the agent has no break-even by size")
	}

	// No journal at all: each mode's prior, for no role or model in particular.
	rules = BreakEven(nil, cost.Defaults())
	require.Len(t, rules, 2)
	assert.Equal(t, "transform pays at any size at a 50% keep rate (prior); at any size above a 36% keep rate", rules[1].Words())
}

func TestGate(t *testing.T) {
	rules := BreakEven(read(t, Filter{}), cost.Defaults())
	q := "qwen2.5-coder-1.5b"
	err := Gate(rules, "transform", "code", q, 5)
	require.Error(t, err)
	status, kind, code := engine.Classify(err)
	assert.Equal(t, engine.StatusRefused, status)
	assert.Equal(t, KindDoesNotPay, kind)
	assert.Equal(t, 1, code)
	assert.Contains(t, err.Error(), "a transform for role code of 5 span lines on qwen2.5-coder-1.5b does not pay: its last 5 runs kept 1")
	assert.Contains(t, err.Error(), "it pays from 392 span lines, and at any size above a 36% keep rate")
	assert.Contains(t, err.Error(), "--delegate-when")
	assert.NoError(t, Gate(rules, "transform", "code", q, 392), "a span at the break-even pays")
	assert.Error(t, Gate(rules, "transform", "code", q, 391))
	assert.NoError(t, Gate(rules, "transform", "code", "another-model", 1), "another model has its own history")
	assert.NoError(t, Gate(rules, "transform", "other", q, 1), "another role has its own history")
	assert.NoError(t, Gate(rules, "summarize", "prose", q, 1), "a role that is not losing is not stopped")

	// GateFor reads only what it needs, newest first, and says the same.
	runs := sealedRuns(t)
	assert.Error(t, GateFor(runs, key, "transform", "code", q, 5, cost.Defaults()))
	assert.NoError(t, GateFor(runs, key, "transform", "code", q, 392, cost.Defaults()))
	assert.NoError(t, GateFor(runs, key, "transform", "code", "another-model", 5, cost.Defaults()))
}

// A role whose last runs kept nothing pays at no size on its ledger: the gate refuses it at
// every size, and only the operator's delegate_when always, whose runs count, wins it back.
func TestARoleThatKeptNothingIsStoppedAtEverySize(t *testing.T) {
	var entries []Entry
	for range 6 {
		entries = append(entries, Entry{Mode: "transform", Role: "code", Model: "m", Status: "RED", Kind: "red", Asked: 3, Costed: true, SpanLines: 5,
			Parts: cost.Parts{Read: 150, Write: 150, Call: 120, Result: 400, Turns: cost.Turns{Direct: 3, Delegated: 1}}})
	}
	rules := BreakEven(entries, cost.Defaults())
	var r cost.Rule
	for _, x := range rules {
		if x.Mode == "transform" {
			r = x
		}
	}
	assert.True(t, r.Stop)
	assert.Nil(t, r.PaysAbove)
	assert.Nil(t, r.StopBelow)
	for _, lines := range []int{1, 21, 5000} {
		err := Gate(rules, "transform", "code", "m", lines)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "at its 0% keep rate it pays at no size")
	}
	assert.Contains(t, r.Words(), "never pays at a 0% keep rate (ledger); at any size above a 36% keep rate; stopped: its last 6 runs kept 0")

	// Runs that never asked the model (no server) are no history: they do not stop the role.
	var unasked []Entry
	for range 6 {
		unasked = append(unasked, Entry{Mode: "transform", Role: "code", Model: "m", Status: "ERROR", Kind: "no_server", Costed: true, Parts: cost.Parts{Call: 120, Result: 300}})
	}
	assert.NoError(t, Gate(BreakEven(unasked, cost.Defaults()), "transform", "code", "m", 1))
}

// A role that keeps most of its edits is not stopped at any size: the turns pay.
func TestAGoodRoleIsNotStopped(t *testing.T) {
	var entries []Entry
	for i := range 8 {
		e := Entry{Mode: "transform", Role: "code", Model: "m", Status: "OK", Asked: 1, Costed: true, SpanLines: 3,
			Parts: cost.Parts{Read: 90, Write: 60, Call: 150, Result: 260, Review: 80, Turns: cost.Turns{Direct: 3, Delegated: 1}, Done: true}}
		if i%4 == 0 {
			e.Status, e.Kind, e.Parts.Done = "RED", "red", false
		}
		entries = append(entries, e)
	}
	rules := BreakEven(entries, cost.Defaults())
	assert.NoError(t, Gate(rules, "transform", "code", "m", 1), "six of eight kept: even a one-line edit saves the host turns")
}

// Refusals for cost are left out of the history: they measured nothing, and counting them would
// keep a stopped role stopped for good.
func TestDoesNotPayRefusalsAreNotHistory(t *testing.T) {
	entries := read(t, Filter{Mode: "transform"})
	for range 20 {
		entries = append(entries, Entry{Mode: "transform", Role: "code", Model: "qwen2.5-coder-1.5b", Status: "REFUSED", Kind: KindDoesNotPay, Asked: 0, Costed: true, Parts: cost.Parts{Call: 120, Result: 300}})
	}
	for _, r := range BreakEven(entries, cost.Defaults()) {
		if r.Mode == "transform" {
			assert.Equal(t, "its last 5 runs kept 1: at that rate a run of 1 span line is expected to cost the host $0.0063 (estimated)", r.Why)
		}
	}
	l, err := Sum(entries, "mode", cost.Defaults())
	require.NoError(t, err)
	assert.Equal(t, 7, l.Rows[0].Runs, "cost refusals are not runs")
	assert.Equal(t, 20, l.Rows[0].CostRefusals)
}

func TestForgedFiguresNeitherOverflowNorPay(t *testing.T) {
	e, ok := FromEvents("r", []map[string]any{
		{"event": "run_start", "mode": "transform"},
		{"event": "run_end", "status": "OK", "details": map[string]any{"lines": "1-2000000000"},
			"host": map[string]any{"params": map[string]any{"turns_left": float64(1 << 40)}, "parts": map[string]any{"read_bytes": float64(1 << 50), "call_bytes": float64(1 << 36), "done": true}}},
	})
	require.True(t, ok)
	assert.Zero(t, e.Parts.Read, "past 64 GiB a count is no run's")
	assert.Zero(t, e.TurnsLeft, "past the setting's ceiling")
	assert.Zero(t, e.SpanLines)
	var sum Row
	big := Entry{Costed: true, TurnsLeft: maxTurns, Parts: cost.Parts{Read: maxCount, Write: maxCount, Done: true}}
	for range 20000 {
		sum.add(big, cost.Defaults(), nil)
	}
	assert.Positive(t, sum.Net, "a sum stops at the largest figure rather than wrapping")
	h := cost.History{Runs: 5, Kept: 5, CallBytes: 1e15, ResultBytes: 1, WritePerRead: 1, BytesPerLine: 1e-9}
	_, ok = h.PaysAbove(cost.Defaults())
	assert.False(t, ok, "a break-even past any span is none")
}

func TestReadSkipsWhatIsNoJournal(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "runs", "20261123T100000Z-000001.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.jsonl"), data, 0o644))
	require.NoError(t, engine.SealJournal(filepath.Join(dir, "a.jsonl"), "a", key))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("not json\n"), 0o644))
	require.NoError(t, os.Symlink(filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "c.jsonl")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o755))
	entries, left, err := Read(dir, key, Filter{})
	require.NoError(t, err)
	assert.Len(t, entries, 1)
	assert.Equal(t, Left{Unreadable: 1}, left, "the file that is not a journal; a link and a folder are not read at all")
	entries, _, err = Read(filepath.Join(dir, "none"), key, Filter{})
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// A figure that decides or advises comes only from journals locum sealed: an edited copy, a
// planted journal, a copy under another name, one from before journals were sealed, and every
// journal when the operator has no key are left out, and said to be.
func TestOnlySealedJournalsCount(t *testing.T) {
	dir := sealedRuns(t)
	entries, left, err := Read(dir, key, Filter{})
	require.NoError(t, err)
	require.Len(t, entries, 10)
	assert.Zero(t, left)
	real, err := os.ReadFile(filepath.Join(dir, "20261201T100000Z-000007.jsonl"))
	require.NoError(t, err)
	// An edited copy: the agent run's read_bytes times a thousand.
	edited := bytes.Replace(real, []byte(`"read_bytes": 900`), []byte(`"read_bytes": 900000`), 1)
	require.NotEqual(t, real, edited)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20261202T100000Z-000011.jsonl"), edited, 0o644))
	// The same run under another name.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20261202T100000Z-000012.jsonl"), real, 0o644))
	// A run of an older locum, unsealed.
	unsealed, err := os.ReadFile(filepath.Join("testdata", "runs", "20261123T110000Z-000002.jsonl"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20261202T100000Z-000013.jsonl"), unsealed, 0o644))
	entries, left, err = Read(dir, key, Filter{})
	require.NoError(t, err)
	assert.Len(t, entries, 10, "nothing more is counted")
	assert.Equal(t, Left{Unsealed: 3}, left)
	assert.Equal(t, "3 journals not counted: locum cannot show it wrote them (no seal of yours holds: from before journals were sealed, changed, copied, or unfinished)", left.Words())

	entries, left, err = Read(dir, bytes.Repeat([]byte{8}, 32), Filter{})
	require.NoError(t, err)
	assert.Empty(t, entries, "another operator's key seals none of them")
	assert.Equal(t, 13, left.Unsealed)
	entries, _, err = Read(dir, nil, Filter{})
	require.NoError(t, err)
	assert.Empty(t, entries, "no key: nothing is sealed")
}

// Planted journals of red runs, named as the newest, neither stop a role nor crowd out the
// history the gate reads.
func TestPlantedRedRunsDoNotGate(t *testing.T) {
	dir := t.TempDir()
	q := "qwen2.5-coder-1.5b"
	red, err := os.ReadFile(filepath.Join("testdata", "runs", "20261123T110000Z-000002.jsonl"))
	require.NoError(t, err)
	for i := range readJournals + 5 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("2099%04dT000000Z-%06d.jsonl", i, i)), red, 0o644))
	}
	assert.NoError(t, GateFor(dir, key, "transform", "code", q, 5, cost.Defaults()), "planted red runs do not stop a role")
	rules, left := DirBreakEven(dir, key, cost.Defaults())
	assert.Equal(t, readJournals+5, left.Unsealed)
	for _, r := range rules {
		assert.False(t, r.Stop)
	}
	// The operator's own red runs, older than every planted one, still do.
	runs := sealedRuns(t)
	names, _ := filepath.Glob(filepath.Join(runs, "*.jsonl"))
	for _, n := range names {
		data, err := os.ReadFile(n)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(n)), data, 0o644))
	}
	assert.Error(t, GateFor(dir, key, "transform", "code", q, 5, cost.Defaults()))
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

// A kept run nobody judged is weighed by its role's right rate, once a person has judged enough
// of the role's kept runs; a rejected run saved nothing.
func TestKeptRunsNobodyJudgedAreWeighedByTheRightRate(t *testing.T) {
	kept := func(verdict string) Entry {
		return Entry{Mode: "agent", Role: "agent", Model: "m", Status: "OK", Asked: 4, Costed: true, Verdict: verdict,
			Parts: cost.Parts{Read: 2000, Write: 600, Call: 200, Result: 300, Review: 700, Turns: cost.Turns{Direct: 5, Delegated: 3}, Done: true}}
	}
	p := cost.Defaults()
	full := kept("").Estimate(p)
	var entries []Entry
	for _, v := range []string{"accepted", "accepted", "accepted", "rejected", "accepted"} {
		entries = append(entries, kept(v))
	}
	entries = append(entries, kept(""))
	l, err := Sum(entries, "mode", p)
	require.NoError(t, err)
	assert.Equal(t, 1, l.Discounted)
	right := 0.8
	judged := kept("").Judged(p, &right)
	assert.Less(t, judged.Net, full.Net, "weighed by four right in five")
	wrong := kept("rejected").Estimate(p)
	assert.Negative(t, wrong.Net, "a rejected run left the job to do")
	assert.InDelta(t, 0.8*float64(full.Net)+0.2*float64(wrong.Net), float64(judged.Net), 1)
	assert.Equal(t, cost.AddTokens(4*full.Net+wrong.Net, judged.Net), l.Total.Net)

	// Four judged are not enough to weigh anything.
	l, err = Sum(entries[1:], "mode", p)
	require.NoError(t, err)
	assert.Zero(t, l.Discounted)
}

// One long line costs the ledger and the break-even (locum ledger, status, the MCP instructions)
// about the line, whatever it holds, and a sealed run of a long run_end still counts. The lines
// are 2 MiB, which -race reads in seconds. Decoded whole, one run_end of "{}" just under the
// 16 MiB cap costs locum ledger 542 MB and status 626 MB (peak RSS), and 2 MiB of it 100 MB
// allocated.
func TestLongLineIsBoundedInMemory(t *testing.T) {
	const size = 2 << 20
	for _, tc := range []struct{ name, open, elem, close string }{
		{"empty objects", "[", `{}`, "]"},
		{"one-key objects", "[", `{"a":0}`, "]"},
		{"one object of many keys", "{", `"k%d":0`, "}"},
		{"settings of empty objects", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl")
			var b bytes.Buffer
			start := `{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z","settings":[{"key":"role","value":"code"}]}`
			if tc.open == "" {
				// The array the ledger reads elements of, long.
				start = `{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z","settings":[{"key":"role","value":"code"},` +
					strings.Repeat(`{},`, (size-200)/3) + `{}]}`
				tc.open, tc.close = "[", "]"
			}
			b.WriteString(start + "\n")
			b.WriteString(`{"event":"run_end","status":"OK","wall_ms":5,"x":` + tc.open)
			for i := 0; b.Len() < size-len(tc.elem)-64; i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(strings.ReplaceAll(tc.elem, "%d", fmt.Sprint(i)))
			}
			b.WriteString(tc.close + "}\n")
			require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			require.NoError(t, engine.SealJournal(path, "20261130T100000Z-aaaaaa", key))

			measure := func(what string, read func()) {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.GC() // twice: a buffer pooled by an earlier read is gone
				runtime.ReadMemStats(&before)
				read()
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s: %.1f MB allocated", what, float64(alloc)/(1<<20))
				assert.Less(t, alloc, uint64(2*size+4<<20), "%s: the line's buffer as it grows, and a little", what)
			}
			measure("ledger", func() {
				entries, left, err := Read(dir, key, Filter{})
				require.NoError(t, err)
				assert.Zero(t, left)
				require.Len(t, entries, 1, "a sealed run of a long line counts")
				assert.Equal(t, "OK", entries[0].Status)
				assert.Equal(t, "code", entries[0].Role)
				assert.Equal(t, int64(5), entries[0].LocalMs)
			})
			measure("status", func() {
				rules, left := DirBreakEven(dir, key, cost.Defaults())
				assert.Zero(t, left)
				assert.NotEmpty(t, rules)
			})
		})
	}
}

// A field the ledger reads, named twice in any letter case, leaves the line unread, however long
// the line; a key it does not read may repeat, since no reading of it is made.
func TestEntryRefusesAFieldTwice(t *testing.T) {
	for name, tc := range map[string]struct {
		end    string
		counts bool
	}{
		"status twice":       {`{"event":"run_end","status":"OK","STATUS":"RED"}`, false},
		"nested, Kelvin":     {`{"event":"run_end","status":"OK","error":{"kind":"red","\u212aind":"x"}}`, false},
		"after a long value": {`{"event":"run_end","x":[` + strings.Repeat(`{},`, 1<<16) + `{}],"status":"OK","status":"RED"}`, false},
		"a key not read":     {`{"event":"run_end","status":"OK","x":1,"x":2}`, true},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl")
		start := `{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z"}`
		require.NoError(t, os.WriteFile(path, []byte(start+"\n"+tc.end+"\n"), 0o644))
		require.NoError(t, engine.SealJournal(path, "20261130T100000Z-aaaaaa", key))
		entries, _, err := Read(dir, key, Filter{})
		require.NoError(t, err)
		assert.Equal(t, tc.counts, len(entries) == 1, name)
	}
}

// A kept run's verify strength is read from its journal as locum writes it, and counted: shown
// where the verify rejected every mutant, blind where it rejected none, none could be made, or
// none could be run. A figure of another shape counts as none measured.
func TestVerifyStrength(t *testing.T) {
	for _, tc := range []struct {
		status, written string
		read            string
		shown, blind    bool
	}{
		{"OK", "4/4", "4/4", true, false},
		{"OK", "2/3", "2/3", false, false},
		{"OK", "0/4", "0/4", false, true},
		{"OK", "0/0", "0/0", false, true},
		{"OK", "?", "?", false, true},
		{"RED", "0/4", "0/4", false, false},
		{"OK", "5/4", "", false, false},
		{"OK", "04/4", "", false, false},
		{"OK", "-1/4", "", false, false},
		{"OK", "99/99", "", false, false},
		{"OK", "all", "", false, false},
		{"OK", "", "", false, false},
	} {
		t.Run(tc.status+" "+tc.written, func(t *testing.T) {
			e, ok := FromEvents("r", []map[string]any{{"event": "run_start", "mode": "transform"},
				{"event": "run_end", "status": tc.status, "details": map[string]any{"lines": "1-3", "verify_strength": tc.written}}})
			require.True(t, ok)
			assert.Equal(t, tc.read, e.Strength)
			assert.Equal(t, tc.shown, e.Shown())
			assert.Equal(t, tc.blind, e.Blind())
		})
	}
	l, err := Sum([]Entry{{Mode: "transform", Status: "OK", Strength: "3/3"}, {Mode: "transform", Status: "OK", Strength: "0/3"},
		{Mode: "transform", Status: "OK"}}, "mode", cost.Defaults())
	require.NoError(t, err)
	assert.Equal(t, 1, l.Total.Shown)
	assert.Equal(t, 1, l.Total.Blind)
	assert.Contains(t, l.Total.StrengthWords(), "1 kept run(s) by a verify that rejected every mutant of the change, 1 by one not shown able to fail on it")
	assert.Empty(t, Row{}.StrengthWords())
}

// The ledger reads a run's span and verify strength, each key once, under the names the modes'
// details write them with (engine.SpanDetails, engine.StrengthDetails).
func TestLedgerReadsTheDetailsTheModesWrite(t *testing.T) {
	details, err := json.Marshal(struct {
		engine.SpanDetails
		engine.StrengthDetails
	}{engine.SpanDetails{File: "a.go", Lines: "3-9"}, engine.StrengthDetails{VerifyStrength: "2/4"}})
	require.NoError(t, err)
	line, err := json.Marshal(map[string]any{"event": "run_end", "status": engine.StatusOK, "details": json.RawMessage(details)})
	require.NoError(t, err)
	b := entryOf("r")
	b.observe(line, &journalLine{})
	assert.Equal(t, 7, b.e.SpanLines)
	assert.Equal(t, "2/4", b.e.Strength)
}
