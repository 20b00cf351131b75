package engine

import (
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// figuresOf runs the results through a run's accounting and returns the result it would print.
func figuresOf(results ...*client.ChatResult) *Result {
	r := &Run{ID: "x", Spec: RunSpec{Mode: "transform"}, details: map[string]any{}, Journal: &Journal{now: time.Now}}
	for _, res := range results {
		r.calls++
		r.add(res)
	}
	return r.result(nil)
}

func TestReceiptFiguresAreTheServersTruth(t *testing.T) {
	out := func(n int64) client.Usage { return client.Usage{In: new(int64(10)), Out: new(n)} }
	t.Run("ttft is the first attempt's, not a sum", func(t *testing.T) {
		res := figuresOf(
			&client.ChatResult{Streamed: true, TTFT: ms(135), Elapsed: ms(900), Usage: out(40)},
			&client.ChatResult{Streamed: true, TTFT: ms(61), Elapsed: ms(700), Usage: out(40)},
			&client.ChatResult{Streamed: true, TTFT: ms(9), Elapsed: ms(500), Usage: out(40)},
		)
		require.NotNil(t, res.TTFTms)
		assert.EqualValues(t, 135, *res.TTFTms)
		assert.EqualValues(t, 2100, res.TimeMs, "time is summed over attempts")
	})
	t.Run("a first attempt that did not stream has no ttft", func(t *testing.T) {
		res := figuresOf(&client.ChatResult{Elapsed: ms(900), Usage: out(40)}, &client.ChatResult{Streamed: true, TTFT: ms(61), Elapsed: ms(700), Usage: out(40)})
		assert.Nil(t, res.TTFTms)
	})
	t.Run("the server's own decode figures win", func(t *testing.T) {
		// llama-server's receipt said 132478.8t/s over a 1ms window; the server timed 64 tokens
		// at 1669.93 t/s.
		res := figuresOf(&client.ChatResult{Streamed: true, TTFT: ms(43), Elapsed: ms(44), Usage: out(64),
			Decode: &client.Decode{Tokens: 64, Time: 38325 * time.Microsecond, Source: "server"}})
		require.NotNil(t, res.Rate)
		assert.InDelta(t, 1669.93, *res.Rate, 0.1)
	})
	// The client measures a decode only over a window long enough to mean anything
	// (TestMeasuredDecode); without one there is no rate.
	t.Run("no decode figures, no rate", func(t *testing.T) {
		r := &client.ChatResult{Streamed: true, TTFT: ms(43), Elapsed: ms(44), Usage: out(64)}
		assert.Nil(t, figuresOf(r).Rate)
		assert.Contains(t, figuresOf(r).Receipt(), " rate=? ")
	})
	t.Run("a measured decode gives the rate", func(t *testing.T) {
		r := &client.ChatResult{Streamed: true, TTFT: ms(100), Elapsed: ms(1100), Usage: out(50),
			Decode: &client.Decode{Tokens: 50, Time: time.Second, Source: "measured"}}
		res := figuresOf(r)
		require.NotNil(t, res.Rate)
		assert.InDelta(t, 50, *res.Rate, 0.01)
	})
	t.Run("token counts saturate and an absurd one prints ?", func(t *testing.T) {
		res := figuresOf(&client.ChatResult{Usage: client.Usage{In: new(int64(math.MaxInt64)), Out: new(int64(3))}}, &client.ChatResult{Usage: client.Usage{In: new(int64(math.MaxInt64)), Out: new(int64(4))}})
		assert.Nil(t, res.In, "an overflowed count is not reported as a number")
		require.NotNil(t, res.Out)
		assert.EqualValues(t, 7, *res.Out)
		assert.Contains(t, res.Receipt(), " in=? out=7t ")
	})
	t.Run("a negative or absurd figure prints ?", func(t *testing.T) {
		neg, huge, rate, negMs := int64(-2), int64(1)<<50, 5e9, int64(-1)
		r := &Result{Status: StatusOK, Mode: "transform", Attempts: 1, In: &neg, Out: &huge, TTFTms: &negMs, Rate: &rate, Spend: "$0.00"}
		assert.Equal(t, "OK mode=transform model=? attempts=1 in=? out=? ttft=? time=0ms rate=? spend=$0.00", r.Receipt())
	})
}

// A usage of 2^63-1 from a server once printed in=-2t.
func TestOverflowingUsageFromTheServer(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", runtest.JSON(`{"choices":[{"finish_reason":"stop","message":{"content":"ok"}}],"usage":{"prompt_tokens":9223372036854775807,"completion_tokens":9223372036854775807}}`))
	spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, s.BaseURL()), Model: "m", JournalPath: filepath.Join(t.TempDir(), "j")}
	res := Execute(context.Background(), spec, []Step{connectStep(), chatStep("a"), chatStep("b")})
	require.Nil(t, res.Error)
	assert.Regexp(t, ` attempts=2 in=\? out=\? ttft=\? time=\d+ms rate=\? `, res.Receipt())
}

// cancelOnDecode cancels a run the first time the observer hears the reply grow: tokens have
// arrived.
type cancelOnDecode struct {
	once   sync.Once
	cancel context.CancelCauseFunc
}

func (c *cancelOnDecode) Observe(ev ProgressEvent) {
	if ev.Stage == StageDecode {
		c.once.Do(func() { c.cancel(&client.SignalError{Signal: interrupt{}}) })
	}
}

type interrupt struct{}

func (interrupt) String() string { return "interrupt" }
func (interrupt) Signal()        {}

// A signal mid-stream stops the run, and the receipt reports what was measured until then.
func TestSignalMidStreamKeepsWhatWasMeasured(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	long := ""
	for range 200 {
		long += "token "
	}
	text := scripted.ChatStream(long)
	s.On("POST", "/v1/chat/completions", scripted.Reply{Headers: map[string]string{"Content-Type": "text/event-stream"}, Body: text, Drip: scripted.Duration(20 * time.Millisecond)})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	spec := RunSpec{Mode: "transform", Settings: runtest.SettingsFor(t, s.BaseURL()), Model: "qwen3-coder-30b", JournalPath: filepath.Join(t.TempDir(), "j"),
		Observer: &cancelOnDecode{cancel: cancel}}
	step := Step{Name: "ask", Run: func(ctx context.Context, r *Run) error {
		_, err := r.Chat(ctx, "ask", client.ChatRequest{Model: r.Spec.Model, MaxTokens: 64, Stream: true, Messages: []client.Message{{Role: "user", Content: "hi"}}})
		return err
	}}
	res := Execute(ctx, spec, []Step{connectStep(), step})
	require.NotNil(t, res.Error)
	assert.Equal(t, "signal", res.Error.Kind)
	assert.Equal(t, 1, res.Attempts)
	require.NotNil(t, res.TTFTms, "tokens had arrived: %s", res.Receipt())
	assert.Positive(t, res.TimeMs)
	data, _ := json.Marshal(res)
	assert.NotContains(t, string(data), `"time_ms":0`)
}
