package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/workflow"
)

// observerFor parses args as a transform command line and returns the observer the CLI would
// give the run, with stderr a terminal or not.
func observerFor(t *testing.T, terminal bool, args ...string) (engine.Observer, *bytes.Buffer) {
	var stderr bytes.Buffer
	e := &env{stderr: &stderr, isTerminal: func(io.Writer) bool { return terminal }}
	e.ticks = make(chan time.Time)
	var got engine.Observer
	cmd := &cli.Command{Name: "transform", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}},
		Action: func(_ context.Context, cmd *cli.Command) error { got = e.observer(cmd); return nil }}
	require.NoError(t, cmd.Run(context.Background(), append([]string{"transform"}, args...)))
	t.Cleanup(e.stopProgress)
	return got, &stderr
}

func TestProgressOnlyOnATerminal(t *testing.T) {
	for _, tt := range []struct {
		name     string
		terminal bool
		args     []string
		shown    bool
	}{
		{"a terminal", true, nil, true},
		{"a log", false, nil, true},
		{"--json on a terminal", true, []string{"--json"}, false},
		{"--json in a log", false, []string{"--json"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			obs, _ := observerFor(t, tt.terminal, tt.args...)
			assert.Equal(t, tt.shown, obs != nil)
			if obs != nil {
				_, live := obs.(*liveProgress)
				assert.Equal(t, tt.terminal, live)
			}
		})
	}
}

func TestProgressShowsTokensAndRate(t *testing.T) {
	obs, stderr := observerFor(t, true)
	require.NotNil(t, obs)
	clock := time.Unix(0, 0)
	obs.(*liveProgress).now = func() time.Time { return clock }
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 1})
	assert.Contains(t, stderr.String(), "request 1: the server reads the prompt")
	obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: 40, Elapsed: 2 * time.Second})
	assert.Contains(t, stderr.String(), "request 1: 40 tokens so far, 20.0 t/s")
	// Within 100 ms of the last render, the same stage waits; a new stage shows at once.
	obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: 41, Elapsed: 2 * time.Second})
	assert.NotContains(t, stderr.String(), "41 tokens")
	clock = clock.Add(100 * time.Millisecond)
	obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: 42, Elapsed: 2 * time.Second})
	assert.Contains(t, stderr.String(), "42 tokens so far")
	obs.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 2})
	assert.Contains(t, stderr.String(), "attempt 2: the verify command runs")
	obs.(*liveProgress).clear()
	assert.Contains(t, stderr.String()[len(stderr.String())-8:], "\r", "the line is cleared before the receipt")
}

func TestProgressShowsDedupBatchesAndScoring(t *testing.T) {
	obs, stderr := observerFor(t, true)
	require.NotNil(t, obs)
	obs.Observe(engine.ProgressEvent{Stage: engine.StageEmbed, Done: 64, Total: 2000})
	assert.Contains(t, stderr.String(), "embedding: 64 of 2000 entries sent")
	obs.Observe(engine.ProgressEvent{Stage: engine.StageScore, Total: 2000})
	assert.Contains(t, stderr.String(), "scoring the pairs of 2000 entries")
}

// An agent's turn and its verify rounds show in the agent's own words.
func TestProgressShowsAnAgentsTurnsAndVerify(t *testing.T) {
	for _, tt := range []struct {
		ev   engine.ProgressEvent
		want string
	}{
		{engine.ProgressEvent{Stage: engine.StageTurn, Attempt: 2, What: "turn 2 of 30: edit_file a.go"}, "turn 2 of 30: edit_file a.go ["},
		{engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 3, What: "run_verify in turn 3"}, "run_verify in turn 3: the verify command runs ["},
		{engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 4, What: "round 1 of 3, after finish"}, "round 1 of 3, after finish: the verify command runs ["},
	} {
		t.Run(tt.want, func(t *testing.T) {
			obs, stderr := observerFor(t, true)
			require.NotNil(t, obs)
			obs.Observe(tt.ev)
			assert.Contains(t, stderr.String(), tt.want)
		})
	}
}

// A narrated line (eval --ab's turn, the agent's tool call) clears the live line before it is
// written, so it starts a line of its own; the next event draws the live line again.
func TestLogLinesWriteAboveTheLiveLine(t *testing.T) {
	obs, stderr := observerFor(t, true)
	require.NotNil(t, obs)
	live := obs.(*liveProgress)
	e := &env{stderr: stderr, live: live}
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 3})
	require.Contains(t, stderr.String(), "request 3: the server reads the prompt")
	before := stderr.Len()
	_, err := logAboveProgress{e}.Write([]byte("turn L code 1/5 pass (120ms)\n"))
	require.NoError(t, err)
	written := stderr.String()[before:]
	line := strings.Index(written, "turn L code")
	require.Positive(t, line, "the line is written after the clearing: %q", written)
	assert.Contains(t, written[:line], "\r", "the live line is cleared first")
	obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 4, Deltas: 3, Elapsed: time.Second})
	assert.Contains(t, stderr.String()[before+len(written):], "request 4: 3 tokens so far")

	// With no live line (a log, --json), the line is written as it is.
	var plain bytes.Buffer
	_, err = logAboveProgress{&env{stderr: &plain}}.Write([]byte("turn H code 1/5 pass\n"))
	require.NoError(t, err)
	assert.Equal(t, "turn H code 1/5 pass\n", plain.String())
}

// What a command prints after its run (the agent's summary line) starts on a line of its own:
// the live line is cleared first.
func TestAgentSummaryClearsTheLiveLine(t *testing.T) {
	obs, stderr := observerFor(t, true)
	e := &env{stderr: stderr, live: obs.(*liveProgress)}
	obs.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 1})
	before := stderr.Len()
	cmd := &cli.Command{Name: "agent", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}}
	_ = e.finish(cmd, &engine.Result{Mode: "agent", Details: &engine.AgentDetails{Status: new("kept"), Turns: 3}}, nil)
	written := stderr.String()[before:]
	i := strings.Index(written, "agent: kept")
	require.GreaterOrEqual(t, i, 0, "%q", written)
	assert.Contains(t, written[:i], "\r", "the live line is cleared before the summary: %q", stderr.String())
}

// A workflow's progress is a line per item as it starts and as it ends, with its step's counts
// and each server's.
func TestWorkflowProgressLines(t *testing.T) {
	var b strings.Builder
	servers := []workflow.Server{{URL: "http://127.0.0.1:1/v1", Running: 1, Done: 2}, {URL: "http://127.0.0.1:2/v1", Red: 1}}
	printProgress(&b, workflow.Progress{Step: "fix", Total: 8, Done: 2, Running: 1, Red: 1, Servers: servers})
	assert.Empty(t, b.String(), "a report of no item prints nothing")
	started := workflow.ItemResult{Step: "fix", Index: 4, Item: "a.go#G", Server: "http://127.0.0.1:1/v1"}
	printProgress(&b, workflow.Progress{Step: "fix", Total: 8, Done: 2, Running: 1, Red: 1, Servers: servers, Started: &started})
	assert.Equal(t, "run: fix 4 started a.go#G on http://127.0.0.1:1/v1 [2 of 8 done, 1 running, 1 red; "+
		"http://127.0.0.1:1/v1 1 running 2 done 0 red; http://127.0.0.1:2/v1 0 running 0 done 1 red]\n", b.String())
	b.Reset()
	item := workflow.ItemResult{Step: "fix", Index: 3, Item: "a.go#F\x1b[31m", Status: "RED", Outcome: "transform: restored a.go lines 1-3"}
	printProgress(&b, workflow.Progress{Step: "fix", Total: 8, Done: 2, Running: 1, Red: 1, Servers: servers, Item: &item})
	assert.Equal(t, "run: fix 3 RED a.go#F\\x1b[31m: transform: restored a.go lines 1-3 [2 of 8 done, 1 running, 1 red; "+
		"http://127.0.0.1:1/v1 1 running 2 done 0 red; http://127.0.0.1:2/v1 0 running 0 done 1 red]\n", b.String())
}

func TestTheBaselineVerifyIsNoAttempt(t *testing.T) {
	assert.Equal(t, "baseline: the verify command runs on the tree before any edit",
		describe(engine.ProgressEvent{Stage: engine.StageVerify, Step: engine.StepBaseline, Attempt: 1}))
	assert.Equal(t, "attempt 2: the verify command runs", describe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "edit", Attempt: 2}))
}
