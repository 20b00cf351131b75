package client

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func clientFor(t *testing.T, s *scripted.Server, tweak ...func(*Config)) *Client {
	t.Helper()
	u, err := rails.ParseEndpoint(s.BaseURL(), false)
	require.NoError(t, err)
	cfg := Config{BaseURL: u, Timeout: 5 * time.Second}
	for _, f := range tweak {
		f(&cfg)
	}
	return New(cfg)
}

func TestProbeNamesEachServer(t *testing.T) {
	cases := []struct {
		mimic   string
		kind    rails.ServerKind
		model   string
		context int64
	}{
		{"ollama", rails.Ollama, "tiny:latest", 2048},
		{"llama-server", rails.LlamaServer, "tiny", 2048},
		{"lmstudio", rails.LMStudio, "qwen3-coder-30b", 32768},
		{"vllm", rails.VLLM, "Qwen/Qwen3-8B", 32768},
	}
	for _, tc := range cases {
		t.Run(tc.mimic, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			info, err := clientFor(t, s).Probe(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tc.kind, info.Kind)
			require.True(t, info.Has(tc.model), "%+v", info.Models)
			for _, m := range info.Models {
				if m.ID == tc.model {
					assert.Equal(t, tc.context, m.Context)
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		s.On("GET", "/v1/models", runtest.JSON(`{"data":[{"id":"m","owned_by":"someone"}]}`))
		info, err := clientFor(t, s).Probe(context.Background())
		require.NoError(t, err)
		assert.Equal(t, rails.Unknown, info.Kind)
	})
	t.Run("llama-server lists only its model", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("llama-server"))
		info, err := clientFor(t, s).Probe(context.Background())
		require.NoError(t, err)
		assert.False(t, info.Has("no-such-model"))
	})
}

func TestHasReadsOllamaTags(t *testing.T) {
	info := ServerInfo{Models: []Model{{ID: "tiny:latest"}, {ID: "coder:7b"}}}
	assert.True(t, info.Has("tiny"), "Ollama serves name:latest for the bare name")
	assert.True(t, info.Has("coder:7b"))
	assert.False(t, info.Has("tin"))
	assert.False(t, info.Has("coder"), "only :latest is implied")
}

func TestChatSendsTheCapEachServerObeys(t *testing.T) {
	cases := []struct {
		name     string
		mimic    string
		show     string
		effort   string
		want     map[string]any
		wantNone []string
	}{
		{"ollama plain model gets no switch", "ollama", `{"capabilities":["completion"]}`, "low", nil, []string{"reasoning_effort", "chat_template_kwargs"}},
		{"ollama thinker gets none", "ollama", `{"capabilities":["completion","thinking"]}`, "low", map[string]any{"reasoning_effort": "none"}, nil},
		{"llama-server", "llama-server", "", "low", map[string]any{"chat_template_kwargs": map[string]any{"enable_thinking": false}}, []string{"reasoning_effort"}},
		{"lm studio", "lmstudio", "", "low", map[string]any{"reasoning_effort": "low", "enable_thinking": false}, nil},
		{"vllm", "vllm", "", "none", map[string]any{"reasoning_effort": "low"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			if tc.show != "" {
				s.On("POST", "/api/show", runtest.JSON(tc.show))
			}
			s.On("POST", "/v1/chat/completions", runtest.Answer("ok"))
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", Effort: tc.effort, MaxTokens: 1024, Messages: []Message{{Role: "user", Content: "hi"}}})
			require.NoError(t, err)
			assert.Equal(t, "ok", res.Answer)
			body := runtest.SentBody(t, s)
			assert.EqualValues(t, 1024, body["max_tokens"])
			assert.NotContains(t, body, "max_completion_tokens")
			for k, v := range tc.want {
				assert.Equal(t, v, body[k], k)
			}
			for _, k := range tc.wantNone {
				assert.NotContains(t, body, k)
			}
		})
	}
}

func TestChatClassifiesRecordedReplies(t *testing.T) {
	cases := []struct {
		name    string
		mimic   string
		reply   scripted.Reply
		stream  bool
		class   rails.ReplyClass
		in, out *int64
	}{
		{"llama-server truncated", "llama-server", scripted.MustFixture("llama-server/chat_plain"), false, rails.ClassTruncated, ptr(46), ptr(48)},
		{"ollama thinker lost to thinking", "ollama", scripted.MustFixture("ollama-tiny-think/chat_plain"), false, rails.ClassLostToThinking, ptr(53), ptr(48)},
		{"ollama thinker stream lost to thinking", "ollama", scripted.MustFixture("ollama-tiny-think/chat_stream"), true, rails.ClassLostToThinking, ptr(53), ptr(16)},
		{"llama-server stream truncated", "llama-server", scripted.MustFixture("llama-server/chat_stream"), true, rails.ClassTruncated, nil, nil},
		{"lm studio reasoning field", "lmstudio", runtest.JSON(`{"choices":[{"finish_reason":"stop","message":{"content":"","reasoning":"mulling"}}]}`), false, rails.ClassThinkOnly, nil, nil},
		{"vllm reasoning_content", "vllm", runtest.JSON(`{"choices":[{"finish_reason":"length","message":{"content":null,"reasoning_content":"mulling"}}],"usage":{"prompt_tokens":5,"completion_tokens":4096}}`), false, rails.ClassLostToThinking, ptr(5), ptr(4096)},
		{"nan and missing usage", "lmstudio", scripted.Reply{Body: `{"choices":[{"finish_reason":"stop","message":{"content":"fine"}}],"usage":{"prompt_tokens":NaN}}`}, false, rails.ClassAnswer, nil, nil},
		{"no usage at all", "lmstudio", runtest.JSON(`{"choices":[{"finish_reason":"stop","message":{"content":"fine"}}]}`), false, rails.ClassAnswer, nil, nil},
		{"tool call as text is text", "lmstudio", runtest.Answer(`<tool_call>{"name":"edit"}</tool_call>`), false, rails.ClassAnswer, ptr(12), ptr(3)},
		{"tool call instead of answer", "llama-server", runtest.JSON(`{"choices":[{"finish_reason":"tool_calls","message":{"content":null,"tool_calls":[{"id":"","type":"function","function":{"name":"x","arguments":"{}"}}]}}]}`), false, rails.ClassEmpty, nil, nil},
		{"not JSON", "lmstudio", scripted.Reply{Body: `<html>oops</html>`, Headers: map[string]string{"Content-Type": "application/json"}}, false, rails.ClassMalformed, nil, nil},
		{"no choices", "lmstudio", runtest.JSON(`{"choices":[]}`), false, rails.ClassMalformed, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			s.On("POST", "/api/show", runtest.JSON(`{"capabilities":["completion","thinking"]}`))
			s.On("POST", "/v1/chat/completions", tc.reply)
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "tiny", Effort: "low", MaxTokens: 48, Stream: tc.stream, Messages: []Message{{Role: "user", Content: "hi"}}})
			require.NotNil(t, res, "err %v", err)
			assert.Equal(t, tc.class, res.Class)
			if tc.class == rails.ClassAnswer {
				require.NoError(t, err)
			} else {
				var re *rails.ReplyError
				require.True(t, errors.As(err, &re), "got %v", err)
				assert.Equal(t, tc.class, re.Class)
			}
			if tc.in != nil {
				assert.Equal(t, tc.in, res.Usage.In)
				assert.Equal(t, tc.out, res.Usage.Out)
			} else if tc.name != "llama-server stream truncated" {
				assert.Nil(t, res.Usage.In)
			}
			assert.Equal(t, tc.stream, res.Streamed)
			if tc.stream {
				assert.Positive(t, res.TTFT)
			}
		})
	}
}

func ptr(n int64) *int64 { return &n }

func TestStreamUsageOnFinishChunk(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("llama-server"))
	s.On("POST", "/v1/chat/completions", scripted.MustFixture("llama-server/chat_stream"))
	res, _ := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 16, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
	require.NotNil(t, res)
	require.NotNil(t, res.Usage.Out)
	assert.EqualValues(t, 16, *res.Usage.Out)
	body := runtest.SentBody(t, s)
	assert.Equal(t, true, body["stream"])
	assert.Equal(t, map[string]any{"include_usage": true}, body["stream_options"])
}

func TestStreamRefusedFallsBackToOneRequest(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("vllm"))
	s.On("POST", "/v1/chat/completions",
		scripted.Reply{Status: 400, JSON: json.RawMessage(`{"error":{"message":"stream is not supported"}}`)},
		runtest.Answer("whole"))
	res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 16, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
	require.NoError(t, err)
	assert.Equal(t, "whole", res.Answer)
	assert.False(t, res.Streamed)
	assert.Len(t, s.RequestsTo("/v1/chat/completions"), 2)
}

func TestTransportFailures(t *testing.T) {
	t.Run("redirect is refused and the second listener never hears a request", func(t *testing.T) {
		second := scripted.New()
		defer second.Close()
		require.NoError(t, second.Mimic("lmstudio"))
		s := scripted.New()
		defer s.Close()
		s.On("GET", "/v1/models", scripted.Reply{Redirect: second.URL + "/v1/models"})
		_, err := clientFor(t, s).Probe(context.Background())
		var re *RedirectError
		require.True(t, errors.As(err, &re), "got %v", err)
		assert.Empty(t, second.Requests())
	})
	t.Run("body over the cap", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("lmstudio"))
		big := `{"choices":[{"finish_reason":"stop","message":{"content":"` + strings.Repeat("a", 4096) + `"}}]}`
		s.On("POST", "/v1/chat/completions", scripted.Reply{Body: big})
		c := clientFor(t, s, func(c *Config) { c.MaxResponseBytes = 1024 })
		_, err := c.Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1, Messages: []Message{{Role: "user", Content: "hi"}}})
		var tl *TooLargeError
		require.True(t, errors.As(err, &tl), "got %v", err)
	})
	t.Run("body over the cap without a length", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("lmstudio"))
		big := `{"choices":[{"finish_reason":"stop","message":{"content":"` + strings.Repeat("a", 4096) + `"}}]}`
		s.On("POST", "/v1/chat/completions", scripted.Reply{Body: big, Drip: scripted.Duration(time.Microsecond)})
		c := clientFor(t, s, func(c *Config) { c.MaxResponseBytes = 1024 })
		_, err := c.Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1, Messages: []Message{{Role: "user", Content: "hi"}}})
		var tl *TooLargeError
		require.True(t, errors.As(err, &tl), "got %v", err)
	})
	t.Run("drip-fed body hits the deadline", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("lmstudio"))
		s.On("POST", "/v1/chat/completions", scripted.Reply{Body: strings.Repeat(" ", 8000) + `{}`, Drip: scripted.Duration(20 * time.Millisecond)})
		c := clientFor(t, s, func(c *Config) { c.Timeout = 200 * time.Millisecond })
		_, err := c.Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1, Messages: []Message{{Role: "user", Content: "hi"}}})
		var te *TimeoutError
		require.True(t, errors.As(err, &te), "got %v", err)
		assert.Equal(t, "timeout", te.What)
	})
	t.Run("no first token", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("lmstudio"))
		s.On("POST", "/v1/chat/completions", scripted.Reply{Hang: scripted.Duration(10 * time.Minute), Body: "{}"})
		c := clientFor(t, s, func(c *Config) { c.FirstTokenTimeout = 100 * time.Millisecond })
		_, err := c.Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
		var te *TimeoutError
		require.True(t, errors.As(err, &te), "got %v", err)
		assert.Equal(t, "first_token_timeout", te.What)
	})
	t.Run("HTTP 500 keeps the server's words", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("llama-server"))
		s.On("POST", "/v1/chat/completions", scripted.MustFixture("llama-server/err_missing_messages"))
		_, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1})
		var he *HTTPError
		require.True(t, errors.As(err, &he), "got %v", err)
		assert.Equal(t, 500, he.Status)
		assert.NotEmpty(t, he.Message)
	})
	t.Run("ollama 400 for a cap it does not take", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("ollama"))
		s.On("POST", "/v1/chat/completions", scripted.MustFixture("ollama-tiny-think/chat_reasoning"))
		_, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 1})
		var he *HTTPError
		require.True(t, errors.As(err, &he), "got %v", err)
		assert.Equal(t, `think value "low" is not supported for this model`, he.Message)
	})
	t.Run("connection refused", func(t *testing.T) {
		u, _ := url.Parse("http://" + scripted.RefusedAddr() + "/v1")
		_, err := New(Config{BaseURL: u}).Probe(context.Background())
		var ue *UnreachableError
		require.True(t, errors.As(err, &ue), "got %v", err)
		assert.Contains(t, ue.Error(), "lms server start")
	})
	t.Run("dialer refuses a remote address after resolution", func(t *testing.T) {
		u, _ := url.Parse("http://192.0.2.1:9/v1")
		attempts := 0
		c := New(Config{BaseURL: u, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			attempts++
			return rails.LoopbackDialer(false)(ctx, network, addr)
		}})
		_, err := c.Probe(context.Background())
		var off *rails.OffLoopbackError
		require.True(t, errors.As(err, &off), "got %v", err)
		assert.Equal(t, 1, attempts)
	})
}

func TestEmbed(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", scripted.MustFixture("llama-server-embeddings/embeddings"))
	res, err := clientFor(t, s).Embed(context.Background(), "tiny-embed", []string{"a", "b"})
	require.NoError(t, err)
	require.Len(t, res.Vectors, 2)
	assert.Equal(t, len(res.Vectors[0]), len(res.Vectors[1]))
}

func TestDecodeEmbeddings(t *testing.T) {
	cases := []struct {
		name, body string
		n          int
		want       string // "" ok
	}{
		{"in order", `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`, 2, ""},
		{"out of order is placed by index", `{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}`, 2, ""},
		{"wrong count", `{"data":[{"index":0,"embedding":[1,0]}]}`, 2, "1 vectors for 2 inputs"},
		{"wrong length", `{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[1]}]}`, 2, "has length 1"},
		{"duplicate index", `{"data":[{"index":0,"embedding":[1,0]},{"index":0,"embedding":[1,0]}]}`, 2, "given twice"},
		{"nan", `{"data":[{"index":0,"embedding":[NaN,0]}]}`, 1, "NaN or Infinity"},
		{"empty", `{"data":[{"index":0,"embedding":[]}]}`, 1, "empty"},
		{"strings", `{"data":[{"index":0,"embedding":"abc"}]}`, 1, "not a list of numbers"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := DecodeEmbeddings([]byte(tc.body), tc.n)
			if tc.want == "" {
				require.NoError(t, err)
				assert.Equal(t, []float32{1, 0}, res.Vectors[0])
				return
			}
			var be *BadEmbeddingError
			require.True(t, errors.As(err, &be), "got %v", err)
			assert.Contains(t, be.Error(), tc.want)
		})
	}
}
