package client

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func tokenized(n int) scripted.Reply {
	return runtest.JSON(`{"tokens":[` + strings.TrimSuffix(strings.Repeat("1,", n), ",") + `]}`)
}

// A prompt that, with room for the reply, does not fit the model's loaded context is refused
// before the chat request: a server would cut it from the top and answer anyway.
func TestPromptMustFitTheLoadedContext(t *testing.T) {
	span := strings.Repeat("x := compute(a, b) // 26 KB of code\n", 26<<10/36)
	cases := []struct {
		name      string
		mimic     string
		tokenize  *scripted.Reply
		model     string
		prompt    string
		maxTokens int64
		refused   bool
		counted   bool
		says      []string
	}{
		{"ollama, estimated, over", "ollama", nil, "tiny", span, 512, true, false, []string{"estimated at 2.5 bytes a token", "over the 2048-token context tiny has loaded", "Narrow the input (--lines), lower --max-output-tokens, or load the model with a larger context on the server"}},
		{"ollama, estimated, fits", "ollama", nil, "tiny", "short task", 512, false, false, nil},
		{"ollama, the reply's room counts", "ollama", nil, "tiny", "short task", 2048, true, false, []string{"plus --max-output-tokens 2048"}},
		{"llama-server counts, over", "llama-server", ptrReply(tokenized(1900)), "tiny", "small text the server says is long", 512, true, true, []string{"counted by the server's /tokenize"}},
		{"llama-server counts, fits", "llama-server", ptrReply(tokenized(4)), "any-name", span, 512, false, true, nil},
		{"llama-server cannot count: estimate", "llama-server", nil, "tiny", span, 512, true, false, []string{"estimated"}},
		{"vllm counts with its template", "vllm", ptrReply(runtest.JSON(`{"count":32000,"max_model_len":32768,"tokens":[]}`)), "Qwen/Qwen3-8B", "hi", 1024, true, true, []string{"32000 tokens, counted"}},
		{"unknown context: not checked", "lmstudio", nil, "not-listed", span, 4096, false, false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			if tc.tokenize != nil {
				s.On("POST", "/tokenize", *tc.tokenize)
			}
			s.On("POST", "/v1/chat/completions", runtest.Answer("ok"))
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: tc.model, MaxTokens: tc.maxTokens, Narrow: "--lines", Messages: []Message{{Role: "user", Content: tc.prompt}}})
			if !tc.refused {
				require.NoError(t, err)
				assert.Len(t, s.RequestsTo("/v1/chat/completions"), 1)
				if res.Fit.Context > 0 {
					assert.Equal(t, tc.counted, res.Fit.Counted)
				}
				return
			}
			var ce *ContextError
			require.True(t, errors.As(err, &ce), "got %v", err)
			assert.Empty(t, s.RequestsTo("/v1/chat/completions"), "refused before the request")
			assert.Equal(t, tc.counted, ce.Fit.Counted)
			for _, want := range tc.says {
				assert.Contains(t, err.Error(), want)
			}
		})
	}
}

func TestRemediesWithoutANarrowingFlag(t *testing.T) {
	err := &ContextError{Model: "m", Fit: PromptFit{Context: 10, Tokens: 20, Method: "estimate"}, MaxOutput: 5}
	assert.Contains(t, err.Error(), "would cut the prompt. Lower --max-output-tokens, or load the model")
	assert.NotContains(t, err.Error(), "--lines")
	cut := &InputTruncatedError{Read: 10, Fit: PromptFit{Context: 10}}
	assert.Contains(t, cut.Error(), "not an answer to the task. Load the model with a larger context")
}

func ptrReply(r scripted.Reply) *scripted.Reply { return &r }

// A reply to a prompt the server cut is never an answer: Ollama reads as many tokens as the
// context holds (recorded: prompt_tokens 2048 of 2048), llama-server fewer than it counted.
func TestInputTruncatedIsNotAnAnswer(t *testing.T) {
	cases := []struct {
		name     string
		mimic    string
		tokenize *scripted.Reply
		reply    scripted.Reply
		read     int64
	}{
		{"ollama at the context's limit", "ollama", nil, scripted.MustFixture("ollama-tiny-think/err_too_long"), 2048},
		{"llama-server read fewer than it counted", "llama-server", ptrReply(tokenized(1990)), scripted.MustFixture("llama-server/err_too_long"), 1728},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic(tc.mimic))
			if tc.tokenize != nil {
				s.On("POST", "/tokenize", *tc.tokenize)
			}
			s.On("POST", "/v1/chat/completions", tc.reply)
			_, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 4, Messages: []Message{{Role: "user", Content: "a long story"}}})
			var te *InputTruncatedError
			require.True(t, errors.As(err, &te), "got %v", err)
			assert.Equal(t, tc.read, te.Read)
			assert.Contains(t, err.Error(), "the server cut the prompt")
		})
	}
}

// An Ollama model that was not loaded when the server was probed has no context to check
// against; after the reply has loaded it, locum asks again, and a prompt cut to that context is
// still caught.
func TestOllamaContextLearnedAfterTheModelLoads(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("ollama"))
	s.On("GET", "/api/ps", runtest.JSON(`{"models":[]}`), runtest.JSON(`{"models":[{"name":"tiny:latest","model":"tiny:latest","context_length":2048}]}`))
	s.On("POST", "/v1/chat/completions", scripted.MustFixture("ollama-tiny-think/err_too_long"))
	c := clientFor(t, s)
	res, err := c.Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 4, Messages: []Message{{Role: "user", Content: "a long story"}}})
	var te *InputTruncatedError
	require.True(t, errors.As(err, &te), "got %v", err)
	assert.EqualValues(t, 2048, res.Fit.Context)
	assert.Contains(t, err.Error(), "the prompt was 13 tokens, estimated")

	// The next request is checked before it is sent.
	_, err = c.Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: 4096, Messages: []Message{{Role: "user", Content: "again"}}})
	var ce *ContextError
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.Len(t, s.RequestsTo("/v1/chat/completions"), 1)
}
