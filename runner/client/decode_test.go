package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/scripted"
)

// llama-server reports its own decode timings (recorded: 16 tokens in 5.444 ms); the receipt's
// rate is the server's.
func TestRateFromLlamaServerTimings(t *testing.T) {
	for _, stream := range []bool{false, true} {
		s := scripted.New()
		require.NoError(t, s.Mimic("llama-server"))
		fixture := "llama-server/chat_plain"
		want := 48 / 16.265e-3
		if stream {
			fixture, want = "llama-server/chat_stream", 16/5.444e-3
		}
		s.On("POST", "/v1/chat/completions", scripted.MustFixture(fixture))
		res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 48, Stream: stream, Messages: []Message{{Role: "user", Content: "hi"}}})
		s.Close()
		require.NotNil(t, res, "err %v", err)
		require.NotNil(t, res.Decode)
		assert.Equal(t, "server", res.Decode.Source)
		assert.InDelta(t, want, float64(res.Decode.Tokens)/res.Decode.Time.Seconds(), 0.5)
	}
}

// A real coding model's streamed transform (Qwen2.5-Coder-1.5B on llama-server 0c1e570,
// recorded by the real-model tier): the usage and the decode rate are the server's own, from
// the last chunk, which has no choices.
func TestRecordedQwenStream(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("llama-server"))
	s.On("POST", "/v1/chat/completions", scripted.MustFixture("llama-server-0c1e570-qwen/transform_stream"))
	res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "qwen2.5-coder-1.5b-instruct", MaxTokens: 512, Stream: true, Messages: []Message{{Role: "user", Content: "fix Add"}}})
	require.NoError(t, err)
	assert.Equal(t, rails.ClassAnswer, res.Class)
	assert.Equal(t, "```\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```", res.Answer)
	require.NotNil(t, res.Usage.In)
	require.NotNil(t, res.Usage.Out)
	assert.Equal(t, int64(165), *res.Usage.In)
	assert.Equal(t, int64(19), *res.Usage.Out)
	require.NotNil(t, res.Decode)
	assert.Equal(t, "server", res.Decode.Source)
	assert.InDelta(t, 19/1.233193, float64(res.Decode.Tokens)/res.Decode.Time.Seconds(), 0.01)
}

// A --timeout mid-stream keeps what was measured up to it, as a signal does.
func TestTimeoutMidStreamKeepsWhatWasMeasured(t *testing.T) {
	t.Parallel()
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	// The first token arrives within milliseconds and the stream lasts minutes: the timeout
	// always falls mid-stream, however loaded the machine.
	long := strings.Repeat("token ", 4000)
	s.On("POST", "/v1/chat/completions", scripted.Reply{Headers: map[string]string{"Content-Type": "text/event-stream"}, Body: scripted.ChatStream(long), Drip: scripted.Duration(2 * time.Millisecond)})
	c := clientFor(t, s, func(cfg *Config) { cfg.Timeout = 3 * time.Second })
	res, err := c.Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 64, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
	var te *TimeoutError
	require.True(t, errors.As(err, &te), "got %v", err)
	require.NotNil(t, res, "the figures measured before the timeout")
	assert.Positive(t, res.TTFT)
	assert.Greater(t, res.Elapsed, res.TTFT)
	assert.True(t, res.Streamed)
}

func TestMeasuredDecode(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	out := func(n int64) Usage { return Usage{In: ptr(10), Out: ptr(n)} }
	t.Run("no decode from a window too short to mean anything", func(t *testing.T) {
		assert.Nil(t, measuredDecode(&ChatResult{Streamed: true, TTFT: ms(43), Elapsed: ms(44), Usage: out(64)}))
	})
	t.Run("a long enough streamed decode is measured", func(t *testing.T) {
		d := measuredDecode(&ChatResult{Streamed: true, TTFT: ms(100), Elapsed: ms(1100), Usage: out(50)})
		require.NotNil(t, d)
		assert.Equal(t, Decode{Tokens: 50, Time: time.Second, Source: "measured"}, *d)
	})
	t.Run("a reply that did not stream has no measured decode", func(t *testing.T) {
		assert.Nil(t, measuredDecode(&ChatResult{Elapsed: ms(5000), Usage: out(50)}))
	})
}
