package ledger

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/hostusage"
)

// transcripts is the recorded-shaped Claude Code transcripts the journals in testdata/hostruns
// were made by: a session whose host called locum by Bash, by MCP and from a subagent, and one
// that made two MCP calls in one response and retried by Bash.
var transcripts = filepath.Join("..", "hostusage", "testdata", "claude")

// sealedHostRuns is a copy of testdata/hostruns, each journal sealed under key.
func sealedHostRuns(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	names, err := filepath.Glob("testdata/hostruns/*.jsonl")
	require.NoError(tb, err)
	require.NotEmpty(tb, names)
	for _, src := range names {
		data, err := os.ReadFile(src)
		require.NoError(tb, err)
		dst := filepath.Join(dir, filepath.Base(src))
		require.NoError(tb, os.WriteFile(dst, data, 0o644))
		require.NoError(tb, engine.SealJournal(dst, strings.TrimSuffix(filepath.Base(src), ".jsonl"), key))
	}
	return dir
}

func usage(in, cw, cr, out int64) hostusage.Usage {
	return hostusage.Usage{Input: in, CacheCreation: cw, CacheRead: cr, Output: out}
}

// measuredRun is what a joined run's figures must be: its two requests' shares, by hand from the
// fixture (a request that served two runs is split, its remainder to the first run), and C.
type measuredRun struct {
	mode, tool string
	sidechain  bool
	call, read hostusage.Usage
	context    int64
}

// The fixture's runs, joined. Session 7f3c... main chain contexts: 42074, 43556, 44463, 45785,
// 46484, 46862 (median 45124); its subagent's 17234 and 18053 (17643). Session c0ff...: 33008,
// 34734, 37333, 37832, 38042 (37333).
var wantJoined = map[string]measuredRun{
	// Bash; read by the request that also made the next call (shared in two).
	"20261126T100105Z-a1b2c3": {"transform", "Bash", false, usage(6, 1480, 42070, 141), usage(2, 455, 21775, 59), 45124},
	// MCP; made by that shared request.
	"20261126T100130Z-d4e5f6": {"summarize", "mcp__locum__summarize", false, usage(1, 455, 21775, 59), usage(5, 1320, 44460, 190), 45124},
	// A subagent's Bash call: the subagent's own requests and context.
	"20261126T100222Z-0a0b0c": {"dedup", "Bash", true, usage(4, 6210, 11020, 64), usage(3, 820, 17230, 96), 17643},
	// Two MCP calls in one response (shared in two), both results read by the request that
	// retried by Bash (shared in three).
	"20261126T140010Z-b10001": {"transform", "mcp__locum__transform", false, usage(4, 1450, 15050, 106), usage(2, 574, 11004, 59), 37333},
	"20261126T140011Z-b20002": {"transform", "mcp__locum__transform", false, usage(4, 1450, 15050, 106), usage(1, 573, 11003, 58), 37333},
	"20261126T140120Z-b30003": {"transform", "Bash", false, usage(1, 573, 11003, 58), usage(3, 2600, 34730, 420), 37333},
}

// checkMeasured holds a report of the fixture to the figures counted by hand.
func checkMeasured(tb testing.TB, rep Report) {
	tb.Helper()
	h := rep.Host
	require.NotNil(tb, h)
	assert.Equal(tb, 3, h.Files)
	assert.Equal(tb, 2, h.Sessions)
	assert.Equal(tb, 7, h.Calls, "six runs' calls and a runs show")
	assert.Equal(tb, hostusage.Left{Lines: 1}, h.Left, "the torn last line")
	assert.Equal(tb, 6, h.Joined)
	assert.Equal(tb, 1, h.Unjoined, "the run made at a terminal")
	got := map[string]measuredRun{}
	for _, r := range h.Runs {
		got[r.Run] = measuredRun{r.Mode, r.Tool, r.Sidechain, r.Call, r.Read, r.Context}
		assert.Equal(tb, 2, r.Turns, r.Run)
		turns := r.Call.Add(r.Read)
		assert.Equal(tb, turns.Tokens(), r.Tokens, r.Run)
		assert.InDelta(tb, turns.USD(cost.Families["claude"]), r.USD, 1e-6, r.Run)
		assert.Equal(tb, cost.MethodMeasured, r.Method)
	}
	assert.Equal(tb, wantJoined, got)
	// The first run's turns in dollars, by hand: claude's $3 in, $3.75 cache write, $0.30
	// cached, $15 out per million.
	assert.InDelta(tb, (6*3+1480*3.75+42070*0.3+141*15+2*3+455*3.75+21775*0.3+59*15)/1e6, h.Runs[0].USD, 1e-6)

	rows := map[string]*RowHost{}
	for _, r := range rep.Rows {
		rows[r.Key] = r.Host
	}
	assert.Equal(tb, RowHost{Method: "measured", Joined: 4, Turns: 8, Tokens: 65988 + 28249 + 28245 + 49388, USD: rows["transform"].USD, Context: 37333, contexts: rows["transform"].contexts}, *rows["transform"])
	assert.Equal(tb, 68265, int(rows["summarize"].Tokens))
	assert.Equal(tb, int64(45124), rows["summarize"].Context)
	assert.Equal(tb, 35447, int(rows["dedup"].Tokens))
	assert.Equal(tb, int64(17643), rows["dedup"].Context)
	total := rep.Total.Host
	require.NotNil(tb, total)
	assert.Equal(tb, 6, total.Joined)
	assert.Equal(tb, int64(275582), total.Tokens)
	assert.Equal(tb, int64(37333), total.Context)
	var usd float64
	for _, r := range h.Runs {
		usd += r.USD
	}
	assert.InDelta(tb, usd, total.USD, 1e-6)
	// Both sessions used locum's MCP tools: 6 and 5 main-chain requests carried the list.
	assert.Equal(tb, Standing{Method: h.Standing.Method, ToolListTokens: 7427, Sessions: 2, Requests: 11, Tokens: 11 * 7427, USD: 0.024509}, h.Standing)
	for run, w := range wantJoined {
		c, ok := h.Context(run)
		assert.True(tb, ok)
		assert.Equal(tb, w.context, c)
	}
	_, ok := h.Context("20261126T160000Z-c00001")
	assert.False(tb, ok, "a run no host call made has no measured C")
}

func TestBuildMeasured(t *testing.T) {
	dir := sealedHostRuns(t)
	host := HostUsage{Folder: transcripts, ToolListTokens: 7427}
	rep, err := BuildMeasured(dir, key, Filter{}, "mode", cost.Defaults(), host)
	require.NoError(t, err)
	checkMeasured(t, rep)

	// Without a folder, the ledger is Build's, unchanged.
	plain, err := Build(dir, key, Filter{}, "mode", cost.Defaults())
	require.NoError(t, err)
	none, err := BuildMeasured(dir, key, Filter{}, "mode", cost.Defaults(), HostUsage{})
	require.NoError(t, err)
	assert.Equal(t, plain, none)
	assert.Nil(t, none.Host)
	assert.Nil(t, none.Total.Host)

	// The context measured around each joined run's call replaces the default in its estimate.
	tr := func(r Report) Row {
		for _, row := range r.Rows {
			if row.Key == "transform" {
				return row
			}
		}
		t.Fatal("no transform row")
		return Row{}
	}
	measured, def := tr(rep), tr(plain)
	require.NotZero(t, def.TurnsSaved)
	assert.Equal(t, def.TurnsSaved, measured.TurnsSaved, "the same turns")
	assert.NotEqual(t, def.TurnTokens, measured.TurnTokens, "at the measured context")

	// A folder that is not there is the operator's mistake, said.
	_, err = BuildMeasured(dir, key, Filter{}, "mode", cost.Defaults(), HostUsage{Folder: filepath.Join(t.TempDir(), "missing")})
	assert.ErrorContains(t, err, "host transcripts")
}

func TestBuildMeasuredWindows(t *testing.T) {
	dir := sealedHostRuns(t)
	host := HostUsage{Folder: transcripts, ToolListTokens: 7427}
	tests := []struct {
		name     string
		f        Filter
		by       string
		joined   int
		unjoined int
		sessions int
		rows     map[string]int
	}{
		{"by model", Filter{}, "model", 6, 1, 2, map[string]int{"qwen2.5-coder:7b": 5, "all-minilm": 1}},
		{"by week", Filter{}, "week", 6, 1, 2, map[string]int{"2026-W48": 6}},
		{"since the afternoon: the second session only", Filter{Since: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)}, "mode", 3, 1, 1, map[string]int{"transform": 3}},
		{"one mode", Filter{Mode: "dedup"}, "mode", 1, 0, 1, map[string]int{"dedup": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := BuildMeasured(dir, key, tt.f, tt.by, cost.Defaults(), host)
			require.NoError(t, err)
			assert.Equal(t, tt.joined, rep.Host.Joined)
			assert.Equal(t, tt.unjoined, rep.Host.Unjoined)
			assert.Equal(t, tt.sessions, rep.Host.Standing.Sessions)
			got := map[string]int{}
			for _, r := range rep.Rows {
				got[r.Key] = r.Host.Joined
			}
			assert.Equal(t, tt.rows, got)
		})
	}
}

// Only the journals locum sealed are joined: a journal a repository brought along, naming the
// run id a transcript's result names, is not counted, measured or not.
func TestBuildMeasuredCountsOnlySealed(t *testing.T) {
	dir := sealedHostRuns(t)
	data, err := os.ReadFile(filepath.Join("testdata", "hostruns", "20261126T140120Z-b30003.jsonl"))
	require.NoError(t, err)
	path := filepath.Join(dir, "20261126T140120Z-b30003.jsonl")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	rep, err := BuildMeasured(dir, key, Filter{}, "mode", cost.Defaults(), HostUsage{Folder: transcripts})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Unsealed)
	assert.Equal(t, 5, rep.Host.Joined)
	for _, r := range rep.Host.Runs {
		assert.NotEqual(t, "20261126T140120Z-b30003", r.Run)
	}
	assert.Zero(t, rep.Host.Standing.Tokens, "no tool list size, no standing cost")
}

// BenchmarkHostUsageJoin joins the recorded-shaped transcripts to their sealed journals, as
// `locum ledger --host-transcripts` does, and checks the measured figures.
func BenchmarkHostUsageJoin(b *testing.B) {
	dir := sealedHostRuns(b)
	host := HostUsage{Folder: transcripts, ToolListTokens: 7427}
	var rep Report
	for b.Loop() {
		var err error
		if rep, err = BuildMeasured(dir, key, Filter{}, "mode", cost.Defaults(), host); err != nil {
			b.Fatal(err)
		}
	}
	checkMeasured(b, rep)
}
