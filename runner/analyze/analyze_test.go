package analyze

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
)

func TestVerifyGap(t *testing.T) {
	cases := []struct {
		name, verify, tail string
		files              []string
		state              string
	}{
		{"names the file", `grep -q "return a + b" calc.go`, "", []string{"calc.go"}, GapNone},
		{"names its base name", `diff -u want.txt pkg/out.txt`, "", []string{"pkg/out.txt"}, GapNone},
		{"a word that only contains the name", `grep x mycalc.go`, "", []string{"calc.go"}, GapFound},
		{"checks nothing", `true`, "", []string{"calc.go"}, GapFound},
		{"go test of every package", `go test ./...`, "", []string{"a/b/c.go"}, GapNone},
		{"go test of the package", `go vet ./... && go test -run TestAdd -count=1 ./calc`, "", []string{"calc/add.go"}, GapNone},
		{"go test of a subtree", `go test ./runner/...`, "", []string{"runner/analyze/gap.go"}, GapNone},
		{"go test of another package", `go test ./runner/...`, "", []string{"rails/shell.go"}, GapFound},
		{"go test with a value flag before the package", `go test -run ./rails ./runner`, "", []string{"rails/shell.go"}, GapFound},
		{"go test at the root only", `go test`, "", []string{"sub/x.go"}, GapFound},
		{"go test at the root", `go test -race`, "", []string{"x.go"}, GapNone},
		{"an import path", `go test github.com/m/x/runner/...`, "", []string{"runner/analyze/gap.go"}, GapNone},
		{"no test files in the package", `go test ./...`, "?   \tgithub.com/m/x/calc\t[no test files]\n", []string{"calc/add.go"}, GapFound},
		{"compiles only", `go build ./... && go vet ./...`, "", []string{"calc/add.go"}, GapFound},
		{"a make target may reach anything", `make test`, "", []string{"calc/add.go"}, GapUnknown},
		{"a cd moves the patterns", `cd sub && go test ./...`, "", []string{"calc/add.go"}, GapUnknown},
		{"a script and a markdown file", `./check.sh`, "", []string{"docs/x.md"}, GapUnknown},
		{"one file seen, one not", `go test ./a`, "", []string{"a/x.go", "b/y.go"}, GapFound},
		{"environment before the command", `CGO_ENABLED=0 go test ./...`, "", []string{"a/x.go"}, GapNone},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := VerifyGap(c.verify, c.tail, c.files)
			assert.Equal(t, c.state, g.State, "%+v", g)
			if c.state == GapFound {
				assert.NotEmpty(t, g.Files)
				assert.NotEmpty(t, g.Reason)
			}
		})
	}
}

func events(t *testing.T, lines ...string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range lines {
		var ev map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		out = append(out, ev)
	}
	return out
}

// The agent's transcript names its events; a guardrail refusal the model recovers
// from is a recovered run whose first failure is the guardrail.
func TestAgentTranscript(t *testing.T) {
	r := Analyze("a", events(t,
		`{"event":"run_start","mode":"agent","model":"m","journal_version":1,"ts":"2026-11-30T10:00:00Z"}`,
		`{"event":"assistant","class":"answer"}`,
		`{"event":"tool_call","tool":"write_file"}`,
		`{"event":"guardrail_block","guardrail":"path outside the worktree"}`,
		`{"event":"nudge","class":"think_only"}`,
		`{"event":"verify","verdict":"exit 1"}`,
		`{"event":"verify","verdict":"exit 0"}`,
		`{"event":"run_end","status":"OK","details":{"files_changed":["a.go","b/b.go"]},"receipt":"OK mode=agent model=m attempts=4 in=? out=? ttft=? time=1ms rate=? spend=$0.00"}`,
	))
	assert.Equal(t, StageGuardrail, r.Primary)
	assert.Equal(t, StageNone, r.Final)
	assert.True(t, r.Recovered)
	assert.Equal(t, 4, r.Attempts)
	assert.Equal(t, []string{StageGuardrail, "reply:think_only", StageVerifyRed}, stagesOf(r.Failures))
	assert.Equal(t, Warning, r.Health)
	// The transcript does not name the verify command, so what it saw cannot be told.
	assert.Equal(t, Gap{State: GapUnknown, Files: []string{}, Reason: "the journal does not name the verify command"}, r.Gap)
}

func stagesOf(fs []Failure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Stage)
	}
	return out
}

func TestAnalyzeHealth(t *testing.T) {
	cases := []struct {
		name    string
		lines   []string
		health  string
		reasons []string
	}{
		{"an empty journal is unfinished", nil, Risky, []string{"unfinished"}},
		{"a restore that failed", []string{
			`{"event":"run_start","mode":"transform"}`,
			`{"event":"guard_failed","guard":"restore calc.go","error":"disk full"}`,
			`{"event":"run_end","status":"ERROR","error":{"kind":"restore_failed"}}`,
		}, Risky, []string{"restore_failed"}},
		{"a journal newer than this locum", []string{
			`{"event":"run_start","mode":"dedup","journal_version":99}`,
			`{"event":"run_end","status":"OK"}`,
		}, Warning, []string{"journal_newer_than_locum"}},
		{"a digest with some unsupported claims", []string{
			`{"event":"run_start","mode":"summarize"}`,
			`{"event":"gate","supported":2,"unsupported":1}`,
			`{"event":"run_end","status":"OK"}`,
		}, Warning, []string{"unsupported_claims"}},
		{"a signal", []string{
			`{"event":"run_start","mode":"transform"}`,
			`{"event":"step_failed","step":"edit","error":"stopped by SIGINT"}`,
			`{"event":"run_end","status":"ERROR","error":{"kind":"signal"}}`,
		}, Warning, []string{"failed:signal"}},
		{"an old journal with no error kind", []string{
			`{"event":"run_start","mode":"transform"}`,
			`{"event":"step_failed","step":"scope","error":"x"}`,
			`{"event":"run_end","status":"ERROR"}`,
		}, Warning, []string{"failed:scope"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Analyze("x", events(t, c.lines...))
			assert.Equal(t, c.health, r.Health)
			assert.Equal(t, c.reasons, r.Reasons)
		})
	}
}

// A verify stopped by a signal is not a verdict of its own: the signal is where the run failed.
func TestSignalDuringVerify(t *testing.T) {
	r := Analyze("s", events(t,
		`{"event":"run_start","mode":"transform","journal_version":1}`,
		`{"event":"scope","file":"calc.go","verify":"go test ./..."}`,
		`{"event":"attempt","attempt":1,"span_lines":3}`,
		`{"event":"verify","attempt":1,"verdict":"stopped"}`,
		`{"event":"step_failed","step":"edit","error":"stopped by SIGTERM"}`,
		`{"event":"run_end","status":"ERROR","error":{"kind":"signal"}}`))
	assert.Equal(t, StageSignal, r.Primary)
	assert.Equal(t, []string{StageSignal}, stagesOf(r.Failures))
	assert.Equal(t, GapNA, r.Gap.State, "a run that did not pass changed nothing")
}

func TestFinalStageOfEachErrorKind(t *testing.T) {
	cases := map[string]string{
		"red": StageVerifyRed, "input_budget": StageBudget, "context_window": StageBudget,
		"off_loopback": StageConnect, "no_server": StageConnect, "redirect": StageConnect, "loading": StageConnect,
		"refused": StageRefused, "signal": StageSignal, "verify_no_verdict": StageVerifyNoVerdict,
		"verify_wrote": StageVerifyNoVerdict, "restore_failed": StageRestore, "reply_think_only": "reply:think_only", "http": "reply:http",
		"timeout": "reply:timeout", "too_large": "reply:too_large", "malformed": "reply:malformed",
		"input_truncated": "reply:input_truncated", "bad_input": StageScope, "internal": StageInternal,
		"context_exhausted": StageBudget, "max_turns": StageTurns, "stalled": StageTurns, "no_tools": StageRefused,
		"unchanged": StageNoChange, "no_change": StageNoChange, "repeated": StageVerifyRed,
	}
	for kind, want := range cases {
		r := Analyze("k", events(t,
			`{"event":"run_start","mode":"transform"}`,
			`{"event":"request","step":"edit"}`,
			`{"event":"reply","step":"edit","error":"x","sent":false}`,
			`{"event":"run_end","status":"ERROR","error":{"kind":"`+kind+`"}}`))
		assert.Equal(t, want, r.Final, kind)
		assert.Equal(t, want, r.Primary, kind)
		assert.Nil(t, r.Figures.InTokens, "a request never sent has no figures")
	}
}

func TestSummarize(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(x float64) *float64 { return &x }
	runs := []Run{
		{Model: "m", Mode: "transform", Status: "OK", Primary: StageNone, Figures: Figures{InTokens: i(100), OutTokens: i(20), TTFTms: i(300), Rate: f(40)}},
		{Model: "m", Mode: "transform", Status: "OK", Primary: StageVerifyRed, Recovered: true, Figures: Figures{InTokens: i(200), OutTokens: i(40), TTFTms: i(500), Rate: f(20)}},
		{Model: "m", Mode: "transform", Status: "RED", Primary: StageVerifyRed, Figures: Figures{InTokens: i(300), OutTokens: i(60), TTFTms: i(100)}},
		{Model: "m", Mode: "transform", Status: "ERROR", Primary: "reply:truncated"},
		{Model: "m", Mode: "transform", Status: "REFUSED", Primary: StageBudget},
		{Model: "m", Mode: "transform", Status: "ERROR", Primary: StageConnect},
		{Model: "a", Mode: "summarize", Status: StageUnfinished, Primary: StageUnfinished},
	}
	groups := Summarize(runs)
	require.Len(t, groups, 2)
	assert.Equal(t, "a", groups[0].Model)
	assert.Equal(t, 1, groups[0].Unfinished)
	assert.Nil(t, groups[0].TokensPerKept)
	g := groups[1]
	assert.Equal(t, []int{6, 2, 1, 3, 1}, []int{g.Runs, g.Kept, g.Red, g.CouldNotRun, g.Recovered})
	assert.Equal(t, StageCount{Stage: StageVerifyRed, Runs: 2}, g.TopStages[0])
	assert.Len(t, g.TopStages, topStages)
	assert.Equal(t, int64(300), *g.MedianTTFT)
	assert.InDelta(t, 30, *g.MedianRate, 1e-9)
	assert.Equal(t, int64(720/2), *g.TokensPerKept)
}

// TestSummarizeHandoffs counts each group's handoffs, their bytes and what became of them.
func TestSummarizeHandoffs(t *testing.T) {
	h := func(bytes int64, use string) *Handoff {
		return &Handoff{Bytes: bytes, Failure: "red", HandoffUse: engine.HandoffUse{Use: use}}
	}
	runs := []Run{
		{Model: "m", Mode: "transform", Status: "RED", Handoff: h(400, engine.HandoffUsed)},
		{Model: "m", Mode: "transform", Status: "RED", Handoff: h(500, engine.HandoffUnused)},
		{Model: "m", Mode: "transform", Status: "RED", Handoff: h(600, engine.HandoffUnknown)},
		{Model: "m", Mode: "transform", Status: "RED", Handoff: h(700, engine.HandoffUsed)},
		{Model: "m", Mode: "transform", Status: "OK"},
		{Model: "m", Mode: "agent", Status: "RED", Handoff: h(900, engine.HandoffUnknown)},
	}
	groups := Summarize(runs)
	require.Len(t, groups, 2)
	for _, tc := range []struct {
		g    Group
		want [5]int64 // handoffs, bytes, used, unused, unknown
	}{{groups[0], [5]int64{1, 900, 0, 0, 1}}, {groups[1], [5]int64{4, 2200, 2, 1, 1}}} {
		g := tc.g
		assert.Equal(t, tc.want, [5]int64{int64(g.Handoffs), g.HandoffBytes, int64(g.HandoffsUsed), int64(g.HandoffsUnused), int64(g.HandoffsUnknown)}, g.Mode)
	}
}

func TestFilter(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	r := Run{Mode: "dedup", Start: day}
	assert.True(t, Filter{}.Keep(r))
	assert.True(t, Filter{Since: day, Mode: "dedup"}.Keep(r))
	assert.False(t, Filter{Since: day.Add(time.Second)}.Keep(r))
	assert.False(t, Filter{Mode: "transform"}.Keep(r))
}

func TestCompare(t *testing.T) {
	a := events(t,
		`{"event":"run_start","mode":"transform","model":"m1","args":["task"],"settings":[{"key":"effort","value":"low","source":"default"}]}`,
		`{"event":"scope","file":"calc.go","lines":"1-7","verify":"true"}`,
		`{"event":"request","prompt_sha256":"aaaaaaaaaaaaaaaa","prompt_bytes":10}`,
		`{"event":"reply","class":"answer"}`,
		`{"event":"attempt","attempt":1,"span_lines":3}`,
		`{"event":"verify","verdict":"exit 0"}`,
		`{"event":"run_end","status":"OK"}`)
	b := events(t,
		`{"event":"run_start","mode":"transform","model":"m2","args":["task"],"settings":[{"key":"effort","value":"high","source":"flag --effort"}]}`,
		`{"event":"scope","file":"calc.go","lines":"1-7","verify":"true"}`,
		`{"event":"request","prompt_sha256":"aaaaaaaaaaaaaaaa","prompt_bytes":10}`,
		`{"event":"reply","class":"truncated","error":"cut"}`,
		`{"event":"step_failed","step":"edit"}`,
		`{"event":"run_end","status":"ERROR","error":{"kind":"reply_truncated"}}`)
	d := Compare("A", a, "B", b)
	assert.True(t, d.SameTask)
	diff := map[string][2]string{}
	for _, r := range d.Differing() {
		diff[r.Key] = [2]string{r.A, r.B}
	}
	assert.Equal(t, map[string][2]string{
		"model":          {"m1", "m2"},
		"setting effort": {"low (default)", "high (flag --effort)"},
		"reply 1 class":  {"answer", "truncated"},
		"attempt 1 edit": {"applied, 3 lines", ""},
		"verify 1":       {"exit 0", ""},
		"status":         {"OK", "ERROR"},
		"primary stage":  {"none", "reply:truncated"},
		"final stage":    {"none", "reply:truncated"},
	}, diff)

	c := events(t, `{"event":"run_start","mode":"transform","args":["another task"]}`)
	assert.False(t, Compare("A", a, "C", c).SameTask)
}

func writeJournal(t *testing.T, dir, id, ts string, size int) {
	t.Helper()
	line := `{"event":"run_start","ts":"` + ts + `","run":"` + id + `"}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(line+strings.Repeat("x", max(0, size-len(line)))), 0o644))
}

func TestPrune(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	setup := func(t *testing.T) string {
		dir := t.TempDir()
		writeJournal(t, dir, "old", "2026-10-01T00:00:00Z", 1000)
		writeJournal(t, dir, "mid", "2026-11-20T00:00:00Z", 1000)
		writeJournal(t, dir, "new", "2026-11-30T00:00:00Z", 1000)
		writeJournal(t, dir, "newest", "2026-11-30T11:00:00Z", 5000)
		// Not a journal, a symbolic link, a folder: never touched.
		require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.jsonl"), []byte(`{"event":"other"}`+"\n"), 0o644))
		require.NoError(t, os.Symlink(filepath.Join(dir, "old.jsonl"), filepath.Join(dir, "link.jsonl")))
		require.NoError(t, os.Mkdir(filepath.Join(dir, "d.jsonl"), 0o755))
		return dir
	}
	ids := func(ps []Pruned) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID+":"+p.Reason)
		}
		return out
	}
	t.Run("by age", func(t *testing.T) {
		dir := setup(t)
		rep, err := Prune(dir, PruneOptions{OlderThan: 30 * 24 * time.Hour, Now: now})
		require.NoError(t, err)
		assert.Equal(t, []string{"old:age"}, ids(rep.Pruned))
		assert.Equal(t, 3, rep.Kept)
		assert.NoFileExists(t, filepath.Join(dir, "old.jsonl"))
		assert.FileExists(t, filepath.Join(dir, "mid.jsonl"))
		assert.FileExists(t, filepath.Join(dir, "notes.jsonl"))
		assert.ElementsMatch(t, []string{"notes.jsonl", "link.jsonl", "d.jsonl"}, rep.Skipped)
	})
	t.Run("by size, oldest first, never the newest", func(t *testing.T) {
		dir := setup(t)
		rep, err := Prune(dir, PruneOptions{MaxBytes: 2000, Now: now})
		require.NoError(t, err)
		assert.Equal(t, []string{"old:size", "mid:size", "new:size"}, ids(rep.Pruned))
		assert.Equal(t, 1, rep.Kept)
		assert.Equal(t, int64(5000), rep.KeptBytes)
		assert.FileExists(t, filepath.Join(dir, "newest.jsonl"))
	})
	t.Run("a dry run removes nothing", func(t *testing.T) {
		dir := setup(t)
		rep, err := Prune(dir, PruneOptions{OlderThan: time.Hour, MaxBytes: 1, Now: now, DryRun: true})
		require.NoError(t, err)
		assert.Equal(t, []string{"old:age", "mid:age", "new:age"}, ids(rep.Pruned))
		assert.FileExists(t, filepath.Join(dir, "old.jsonl"))
	})
	t.Run("no folder", func(t *testing.T) {
		rep, err := Prune(filepath.Join(t.TempDir(), "none"), PruneOptions{OlderThan: time.Hour, Now: now})
		require.NoError(t, err)
		assert.Empty(t, rep.Pruned)
	})
}

func FuzzAnalyze(f *testing.F) {
	f.Add([]byte(`{"event":"run_start","mode":"transform"}` + "\n" + `{"event":"scope","file":"a.go","verify":"go test ./..."}` + "\n" + `{"event":"attempt","attempt":1}` + "\n" + `{"event":"run_end","status":"OK"}`))
	f.Add([]byte(`{"event":"reply","class":7,"in_tokens":"x","ttft_ms":1e308,"elapsed_ms":-1}`))
	seeds, _ := filepath.Glob(filepath.Join("testdata", "journals", "*.jsonl"))
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var evs []map[string]any
		for _, l := range strings.Split(string(data), "\n") {
			var ev map[string]any
			if json.Unmarshal([]byte(l), &ev) == nil {
				evs = append(evs, ev)
			}
		}
		r := Analyze("x", evs)
		if r.Health != Good && r.Health != Warning && r.Health != Risky {
			t.Fatalf("health %q", r.Health)
		}
		if r.Recovered && r.Status != "OK" {
			t.Fatal("recovered without passing")
		}
		Summarize([]Run{r})
		Compare("a", evs, "b", evs)
	})
}

func TestParse(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{"30d": 30 * 24 * time.Hour, "2w": 14 * 24 * time.Hour, "36h": 36 * time.Hour} {
		got, err := ParseAge(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "d", "-1d", "30", "0s", "1.5d", "99999999d", "-3h"} {
		_, err := ParseAge(bad)
		assert.Error(t, err, bad)
	}
	since, err := ParseSince("2026-11-01", now)
	require.NoError(t, err)
	assert.Equal(t, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), since)
	since, err = ParseSince("7d", now)
	require.NoError(t, err)
	assert.Equal(t, now.Add(-7*24*time.Hour), since)
	_, err = ParseSince("last week", now)
	assert.Error(t, err)
	for in, want := range map[string]int64{"100": 100, "500KB": 500 << 10, "100mb": 100 << 20, "1GiB": 1 << 30, "2 MB": 2 << 20} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "MB", "-1", "0", "1.5MB", "9999999999999GB"} {
		_, err := ParseSize(bad)
		assert.Error(t, err, bad)
	}
}

// A reply that fails before its attempt event (cut off) is the attempt its request opened.
func TestFailureOfALaterAttempt(t *testing.T) {
	r := Analyze("t", events(t,
		`{"event":"run_start","mode":"transform","model":"m","journal_version":1}`,
		`{"event":"request","step":"edit","max_tokens":64}`,
		`{"event":"reply","step":"edit","class":"answer"}`,
		`{"event":"attempt","attempt":1,"span_lines":3}`,
		`{"event":"verify","attempt":1,"verdict":"exit 1"}`,
		`{"event":"request","step":"edit","max_tokens":64}`,
		`{"event":"reply","step":"edit","class":"truncated","error":"the answer was cut off"}`,
		`{"event":"run_end","status":"ERROR","error":{"kind":"reply_truncated"}}`))
	assert.Equal(t, 2, r.Attempts)
	require.Len(t, r.Failures, 2)
	assert.Equal(t, Failure{Stage: StageVerifyRed, Attempt: 1}, Failure{Stage: r.Failures[0].Stage, Attempt: r.Failures[0].Attempt})
	assert.Equal(t, "reply:truncated", r.Failures[1].Stage)
	assert.Equal(t, 2, r.Failures[1].Attempt)
}

// A lexical dedup started with an embedding model configured ran none: its end says so.
func TestLexicalDedupRanNoModel(t *testing.T) {
	r := Analyze("d", events(t,
		`{"event":"run_start","mode":"dedup","model":"nomic-embed-text","journal_version":1}`,
		`{"event":"run_end","status":"OK","model":null}`))
	assert.Equal(t, "", r.Model)
}

// An agent whose conversation outgrew the context ended at the budget, not a red verify.
func TestAgentContextExhausted(t *testing.T) {
	r := Analyze("a", events(t,
		`{"event":"run_start","mode":"agent","model":"m","journal_version":1}`,
		`{"event":"request","step":"turn"}`,
		`{"event":"reply","step":"turn","class":"answer"}`,
		`{"event":"run_end","status":"RED","error":{"kind":"context_exhausted","message":"the conversation needs 9000 bytes"}}`))
	assert.Equal(t, StageBudget, r.Final)
}

// Only an attempt that wrote its edit changed the file: one whose reply left the span as it
// was, repeated a rejected reply, failed the checks or could not be applied wrote nothing, so a
// verify that cannot see the file leaves no gap in what the run changed.
func TestOnlyWrittenAttemptsCountAsWrites(t *testing.T) {
	tests := []struct {
		name     string
		attempts []string
		gap      string
	}{
		{"written", []string{`{"event":"attempt","attempt":1,"span_lines":3}`}, GapFound},
		{"written after unchanged", []string{`{"event":"attempt","attempt":1,"unchanged":true}`, `{"event":"attempt","attempt":2,"span_lines":0}`}, GapFound},
		{"unchanged", []string{`{"event":"attempt","attempt":1,"unchanged":true}`}, GapNA},
		{"repeated and unchanged", []string{`{"event":"attempt","attempt":1,"edit_error":"no block"}`,
			`{"event":"attempt","attempt":2,"repeated":1}`, `{"event":"attempt","attempt":3,"unchanged":true}`}, GapNA},
		{"failed the checks", []string{`{"event":"attempt","attempt":1,"checks":"not one declaration"}`}, GapNA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := append([]string{
				`{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z"}`,
				`{"event":"scope","file":"calc.go","verify":"true","lines":"1-3"}`,
			}, tt.attempts...)
			lines = append(lines, `{"event":"run_end","status":"OK","exit_code":0,"receipt":"OK mode=transform"}`)
			r := Analyze("run", events(t, lines...))
			assert.Equal(t, tt.gap, r.Gap.State, "%+v", r.Gap)
		})
	}
}
