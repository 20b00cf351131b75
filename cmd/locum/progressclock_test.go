package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
)

// testClock is a progress view's clock and ticker, driven by the test.
type testClock struct {
	mu    sync.Mutex
	at    time.Time
	ticks chan time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at
}

func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at = c.at.Add(d)
}

// progressWithClock is the observer the CLI gives a transform, with stderr a terminal or not,
// on a clock the test moves.
func progressWithClock(t *testing.T, terminal bool) (*env, *testClock, engine.Observer, *bytes.Buffer) {
	t.Helper()
	var stderr bytes.Buffer
	c := &testClock{at: time.Unix(1000, 0), ticks: make(chan time.Time)}
	e := &env{stderr: &stderr, isTerminal: func(io.Writer) bool { return terminal }, ticks: c.ticks}
	e.now = c.now
	var obs engine.Observer
	cmd := &cli.Command{Name: "transform", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}},
		Action: func(_ context.Context, cmd *cli.Command) error { obs = e.observer(cmd); return nil }}
	require.NoError(t, cmd.Run(context.Background(), []string{"transform"}))
	require.NotNil(t, obs)
	t.Cleanup(e.stopProgress)
	return e, c, obs, &stderr
}

// tick moves the clock by d and ticks the view's ticker; a second send returns only once the
// first tick is drawn, since one goroutine takes them in turn.
func (c *testClock) tick(d time.Duration) {
	c.add(d)
	c.ticks <- time.Time{}
	c.ticks <- time.Time{}
}

// On a terminal, the line's clock moves while the server reads the prompt, though no event
// comes: the ticker redraws it; and where the server says how far it read, the line says so.
func TestLiveLineClockTicksWithoutEvents(t *testing.T) {
	e, c, obs, stderr := progressWithClock(t, true)
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 1})
	c.tick(5 * time.Second)
	c.tick(time.Second)
	e.stopProgress()
	out := stderr.String()
	assert.Contains(t, out, "request 1: the server reads the prompt [0s]")
	assert.Contains(t, out, "request 1: the server reads the prompt [5s]")
	assert.Contains(t, out, "request 1: the server reads the prompt [6s]")
	assert.NotRegexp(t, `\[[0-9]+s\]\s+\[[0-9]+s\]`, out, "one clock on the line, not the bar's too")

	e, c, obs, stderr = progressWithClock(t, true)
	c.add(2 * time.Second)
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 2, Done: 1024, Total: 4096})
	c.tick(3 * time.Second)
	e.stopProgress()
	assert.Contains(t, stderr.String(), "request 2: the server reads the prompt, 1024 of 4096 tokens [2s]")
	assert.Contains(t, stderr.String(), "request 2: the server reads the prompt, 1024 of 4096 tokens [5s]")
}

// Without a terminal: nothing for a run's first seconds, then a plain line at a stage change at
// once, and within a stage at most one every ten seconds, on events or ticks alike.
func TestPlainLinesAtABoundedRate(t *testing.T) {
	e, c, obs, stderr := progressWithClock(t, false)
	lines := func() []string {
		return strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
	}
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 1})
	c.tick(time.Second)
	c.tick(time.Second)
	assert.Empty(t, stderr.String(), "a run of two seconds prints nothing")
	c.tick(time.Second)
	assert.Equal(t, []string{"transform [3s]: request 1: the server reads the prompt"}, lines())
	for range 9 {
		c.tick(time.Second)
	}
	obs.Observe(engine.ProgressEvent{Stage: engine.StagePrefill, Attempt: 1, Done: 512, Total: 4096})
	assert.Len(t, lines(), 1, "within ten seconds of a stage's line, no other")
	c.tick(time.Second)
	assert.Equal(t, "transform [13s]: request 1: the server reads the prompt, 512 of 4096 tokens", lines()[1])
	obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: 10, Elapsed: time.Second})
	assert.Equal(t, "transform [13s]: request 1: 10 tokens so far, 10.0 t/s", lines()[2], "a new stage prints at once")
	for i := range 30 {
		c.add(time.Second)
		obs.Observe(engine.ProgressEvent{Stage: engine.StageDecode, Attempt: 1, Deltas: 20 + i, Elapsed: time.Duration(2+i) * time.Second})
	}
	assert.Len(t, lines(), 6, "thirty seconds of tokens: three lines")
	obs.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Attempt: 1})
	e.stopProgress()
	assert.Equal(t, "transform [43s]: attempt 1: the verify command runs", lines()[6])
	assert.NotContains(t, stderr.String(), "\r", "no terminal control in a log")
}
