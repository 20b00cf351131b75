package engine

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

func chatStep(prompt string) Step {
	return Step{Name: "ask", Run: func(ctx context.Context, r *Run) error {
		_, err := r.Chat(ctx, "ask", client.ChatRequest{Model: r.Spec.Model, MaxTokens: 64, Effort: "low",
			Messages: []client.Message{{Role: "user", Content: prompt}}})
		return err
	}}
}

func connectStep() Step {
	return Step{Name: "connect", Run: func(_ context.Context, r *Run) error { return r.Connect() }}
}

func budgetStep(limit int64) Step {
	return Step{Name: "budget", Run: func(_ context.Context, r *Run) error {
		return rails.CheckBudget("prompt", 100, limit)
	}}
}

func readJournal(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		out = append(out, ev)
	}
	return out
}

func TestExecuteOK(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", runtest.Answer("done"))
	journal := filepath.Join(t.TempDir(), "run.jsonl")
	spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, s.BaseURL()), Model: "qwen3-coder-30b", Routing: "operator", JournalPath: journal}
	res := Execute(context.Background(), spec, []Step{connectStep(), chatStep("hi")})
	require.Nil(t, res.Error)
	assert.Equal(t, StatusOK, res.Status)
	assert.Equal(t, 0, res.ExitCode)
	assert.Regexp(t, `^OK mode=transform model=qwen3-coder-30b routing=operator attempts=1 in=12t out=3t ttft=\? time=\d+ms rate=\? spend=\$0\.00 run=\d{8}T\d{6}Z-[0-9a-f]{6}$`, res.Receipt())

	data, err := json.Marshal(res)
	require.NoError(t, err)
	v, err := schema.New()
	require.NoError(t, err)
	_, err = v.Validate(schema.Result, "result", data)
	require.NoError(t, err, string(data))

	events := readJournal(t, journal)
	names := []string{}
	for _, ev := range events {
		names = append(names, ev["event"].(string))
	}
	assert.Equal(t, []string{"run_start", "step", "step", "request", "reply", "run_end"}, names)
	start := events[0]
	settings := start["settings"].([]any)
	found := false
	for _, s := range settings {
		m := s.(map[string]any)
		if m["key"] == "base_url" {
			found = true
			assert.Equal(t, "flag --base-url", m["source"])
		}
	}
	assert.True(t, found)
	assert.Equal(t, "answer", events[4]["class"])
	assert.Equal(t, "OK", events[5]["status"])
}

func TestExecuteClassifiesFailures(t *testing.T) {
	cases := []struct {
		name     string
		baseURL  string
		reply    scripted.Reply
		steps    func(s *scripted.Server) []Step
		status   Status
		kind     string
		exit     int
		requests int
	}{
		{"off loopback refused before any request", "http://192.0.2.1:1234/v1", runtest.Answer("x"), nil, StatusRefused, "off_loopback", 1, 0},
		{"budget refused before any request", "", runtest.Answer("x"), func(*scripted.Server) []Step { return []Step{connectStep(), budgetStep(10), chatStep("hi")} }, StatusRefused, "input_budget", 1, 0},
		{"truncated reply", "", scripted.MustFixture("llama-server/chat_plain"), nil, StatusError, "reply_truncated", 2, 1},
		{"http error", "", scripted.Reply{Status: 500, Body: "boom"}, nil, StatusError, "http", 2, 1},
		{"red verdict", "", runtest.Answer("x"), func(*scripted.Server) []Step {
			return []Step{connectStep(), chatStep("hi"), {Name: "verify", Run: func(context.Context, *Run) error { return &RedError{Reason: "verify exit 1"} }}}
		}, StatusRed, "red", 1, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("lmstudio"))
			s.On("POST", "/v1/chat/completions", tc.reply)
			base := tc.baseURL
			if base == "" {
				base = s.BaseURL()
			}
			steps := []Step{connectStep(), chatStep("hi")}
			if tc.steps != nil {
				steps = tc.steps(s)
			}
			spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, base), Model: "m", JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
			res := Execute(context.Background(), spec, steps)
			assert.Equal(t, tc.status, res.Status)
			require.NotNil(t, res.Error)
			assert.Equal(t, tc.kind, res.Error.Kind, res.Error.Message)
			assert.Equal(t, tc.exit, res.ExitCode)
			assert.Len(t, s.RequestsTo("/v1/chat/completions"), tc.requests)
			assert.True(t, strings.HasPrefix(res.Receipt(), string(tc.status)+" mode=transform"))
		})
	}
}

func TestGuardsRunOnceOnEveryPath(t *testing.T) {
	paths := map[string]Step{
		"success": {Name: "ok", Run: func(context.Context, *Run) error { return nil }},
		"error":   {Name: "fail", Run: func(context.Context, *Run) error { return errors.New("x") }},
		"panic":   {Name: "panic", Run: func(context.Context, *Run) error { panic("boom") }},
	}
	for name, step := range paths {
		t.Run(name, func(t *testing.T) {
			calls := 0
			guard := Step{Name: "guard", Run: func(_ context.Context, r *Run) error {
				r.Guard("restore", func() error { calls++; return nil })
				return nil
			}}
			res := Execute(context.Background(), RunSpec{Mode: "m", JournalPath: filepath.Join(t.TempDir(), "j")}, []Step{guard, step})
			assert.Equal(t, 1, calls)
			if name == "panic" {
				assert.Contains(t, res.Error.Message, "internal error in a step: boom")
			}
		})
	}
	t.Run("signal", func(t *testing.T) {
		calls := 0
		ctx, cancel := context.WithCancelCause(context.Background())
		steps := []Step{
			{Name: "guard", Run: func(_ context.Context, r *Run) error {
				r.Guard("restore", func() error { calls++; return nil })
				return nil
			}},
			{Name: "wait", Run: func(ctx context.Context, _ *Run) error {
				cancel(&client.SignalError{Signal: syscall.SIGTERM})
				<-ctx.Done()
				return ctx.Err()
			}},
			{Name: "never", Run: func(context.Context, *Run) error { t.Error("ran after the signal"); return nil }},
		}
		res := Execute(ctx, RunSpec{Mode: "m", JournalPath: filepath.Join(t.TempDir(), "j")}, steps)
		assert.Equal(t, 1, calls)
		assert.Equal(t, "signal", res.Error.Kind)
		assert.Contains(t, res.Error.Message, "stopped by SIGTERM")
		assert.Equal(t, 2, res.ExitCode)
	})
	t.Run("a failing guard turns OK into ERROR", func(t *testing.T) {
		steps := []Step{{Name: "guard", Run: func(_ context.Context, r *Run) error {
			r.Guard("restore", func() error { return errors.New("disk full") })
			return nil
		}}}
		res := Execute(context.Background(), RunSpec{Mode: "m", JournalPath: filepath.Join(t.TempDir(), "j")}, steps)
		assert.Equal(t, StatusError, res.Status)
		assert.Contains(t, res.Error.Message, "restore: disk full")
	})
}

// batchMode is a test-only mode whose receipt counts requests, as a registered mode says.
var batchMode = Mode{Name: "test-batch", Model: EmbeddingModel, Counts: "requests"}

func init() { RegisterMode(batchMode) }

func TestReceiptUnknownFigures(t *testing.T) {
	r := &Result{Status: StatusOK, Mode: batchMode.Name, Attempts: 1, TimeMs: 12, Spend: "$0.00"}
	assert.Equal(t, "OK mode=test-batch model=? requests=1 in=? out=? ttft=? time=12ms rate=? spend=$0.00", r.Receipt())
	r.Mode = "unregistered"
	assert.Equal(t, "OK mode=unregistered model=? attempts=1 in=? out=? ttft=? time=12ms rate=? spend=$0.00", r.Receipt())
}

func TestRegisterModeRefusesANameTwice(t *testing.T) {
	assert.Panics(t, func() { RegisterMode(batchMode) })
	assert.Panics(t, func() { RegisterMode(Mode{}) })
	m, ok := LookupMode(batchMode.Name)
	assert.True(t, ok)
	assert.Equal(t, batchMode, m)
	assert.Contains(t, RegisteredModes(), batchMode.Name)
}

func TestJournalWhereGitKeepsIt(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	dir, err := RunsDir(root)
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, ".git", "locum", "runs"), dir)

	wt := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git", "worktrees", "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "worktrees", "x", "HEAD"), []byte("ref: refs/heads/x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: "+filepath.Join(root, ".git", "worktrees", "x")+"\n"), 0o644))
	real, _ := filepath.EvalSymlinks(filepath.Join(root, ".git", "worktrees", "x"))
	assert.Equal(t, filepath.Join(real, "locum", "runs"), gitsafe.GitPath(wt, "locum/runs"))

	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	dir, err = RunsDir(t.TempDir())
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(os.Getenv("XDG_STATE_HOME"), "locum", "runs"), dir)
}

func TestListAndReadRuns(t *testing.T) {
	dir := t.TempDir()
	for _, id := range []string{"20261130T100000Z-aaaaaa", "20261130T110000Z-bbbbbb"} {
		j, err := OpenJournal(filepath.Join(dir, id+".jsonl"), id)
		require.NoError(t, err)
		j.event("run_start", map[string]any{"mode": "transform", "model": "m"})
		j.event("run_end", map[string]any{"status": "OK", "receipt": "OK mode=transform"})
		require.NoError(t, j.Close())
	}
	runs, err := ListRuns(dir, nil)
	require.NoError(t, err)
	require.Len(t, runs, 2)
	assert.Equal(t, "20261130T110000Z-bbbbbb", runs[0].ID)
	assert.Equal(t, "OK", runs[0].Status)
	_, events, err := ReadRun(dir, "20261130T10")
	require.NoError(t, err)
	assert.Len(t, events, 2)
	_, _, err = ReadRun(dir, "20261130")
	assert.ErrorContains(t, err, "names 2 runs")
	_, _, err = ReadRun(dir, "nope")
	assert.ErrorContains(t, err, "no run")
}

// Outside a git repository, a .locum that links out is not written in either.
func TestRepoStateDirRefusesALinkOut(t *testing.T) {
	outside := t.TempDir()
	plain := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(plain, ".locum")))
	t.Setenv("XDG_STATE_HOME", filepath.Join(t.TempDir(), "state"))
	assert.True(t, strings.HasPrefix(RepoStateDir(plain, "rollback"), filepath.Join(os.Getenv("XDG_STATE_HOME"), "locum", "repos")), RepoStateDir(plain, "rollback"))
}

// Every part of a journal line shown on the terminal is escaped: its time, its event name, its
// keys and its values, nested ones too.
func TestEventLineEscapesEveryPart(t *testing.T) {
	line := EventLine(map[string]any{
		"ts":         "2026-01-01T00:00:\x1b[31mREDX",
		"event":      "\x1b]0;pwned\x07evt\nFORGED line",
		"\x1b[2Jkey": "v",
		"nested":     map[string]any{"x": "a\u202eb\u0085"},
		"plain":      "value\nnext",
		"run":        "r",
	})
	assert.NotContains(t, line, "\x1b")
	assert.NotContains(t, line, "\x07")
	assert.NotContains(t, line, "\n")
	assert.NotContains(t, line, "\u202e")
	assert.NotContains(t, line, "\u0085")
}

// When Ollama cannot say what a model does, the cap still holds: "none", which every Ollama
// accepts for any model (the recorded 400s are for "low"; see testdata/real-servers/README.md),
// and the journal says the capabilities are unknown and why.
func TestUnknownOllamaCapabilitiesStillCapThinking(t *testing.T) {
	for _, tc := range []struct {
		effort string
		want   any
	}{{"low", "none"}, {"none", "none"}, {"high", nil}} {
		t.Run(tc.effort, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("ollama"))
			s.On("POST", "/api/show", scripted.Reply{Status: 500, JSON: json.RawMessage(`{"error":"model runner crashed"}`)})
			s.On("POST", "/v1/chat/completions", runtest.Answer("ok"))
			journal := filepath.Join(t.TempDir(), "run.jsonl")
			spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, s.BaseURL()), Model: "tiny", JournalPath: journal}
			step := Step{Name: "ask", Run: func(ctx context.Context, r *Run) error {
				_, err := r.Chat(ctx, "ask", client.ChatRequest{Model: "tiny", MaxTokens: 64, Effort: tc.effort, Messages: []client.Message{{Role: "user", Content: "hi"}}})
				return err
			}}
			res := Execute(context.Background(), spec, []Step{connectStep(), step})
			require.Nil(t, res.Error)
			assert.Equal(t, tc.want, runtest.SentBody(t, s)["reasoning_effort"])
			var capEvent map[string]any
			for _, ev := range readJournal(t, journal) {
				if ev["event"] == "capabilities" {
					capEvent = ev
				}
			}
			require.NotNil(t, capEvent, "the journal says the capabilities are unknown")
			assert.Equal(t, "unknown", capEvent["capabilities"])
			assert.Contains(t, capEvent["error"], "model runner crashed")
		})
	}
}
