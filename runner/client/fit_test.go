package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// A default max_tokens nobody chose gives way to a small context: the request asks for the room
// the prompt leaves, down to MinFittedOutput, and says so in its fit; below that it is refused.
// The model's loaded context here is 2048 tokens, and llama-server counts the prompt.
func TestDefaultMaxTokensFitsTheContext(t *testing.T) {
	for _, tc := range []struct {
		name      string
		prompt    int // tokens, as the server counts the text; a template adds templateTokens
		maxTokens int64
		fit       bool
		refused   bool
		sent      int64 // max_tokens in the request
		fitted    int64 // what the fit reports
	}{
		{"a chosen value is refused", 100, 4096, false, true, 0, 0},
		{"a default is lowered to the room left", 100, 4096, true, false, 2048 - 100 - templateTokens, 2048 - 100 - templateTokens},
		{"a default that fits is sent as it is", 100, 1024, true, false, 1024, 0},
		{"too little room left: refused", 2048 - templateTokens - MinFittedOutput + 1, 4096, true, true, 0, 0},
		{"just enough room", 2048 - templateTokens - MinFittedOutput, 4096, true, false, MinFittedOutput, MinFittedOutput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("llama-server"))
			s.On("POST", "/tokenize", tokenized(tc.prompt))
			// The reply reads the whole prompt: the count and a template's few tokens.
			s.On("POST", "/v1/chat/completions", runtest.JSON(fmt.Sprintf(`{"choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":%d,"completion_tokens":1,"total_tokens":%d}}`, tc.prompt+templateTokens, tc.prompt+templateTokens+1)))
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "tiny", MaxTokens: tc.maxTokens, FitMaxTokens: tc.fit,
				Messages: []Message{{Role: "user", Content: "a task"}}})
			if tc.refused {
				var ce *ContextError
				require.True(t, errors.As(err, &ce), "got %v", err)
				assert.Empty(t, s.RequestsTo("/v1/chat/completions"))
				return
			}
			require.NoError(t, err)
			sent := s.RequestsTo("/v1/chat/completions")
			require.Len(t, sent, 1)
			var body struct {
				MaxTokens int64 `json:"max_tokens"`
			}
			require.NoError(t, json.Unmarshal(sent[0].Body, &body))
			assert.Equal(t, tc.sent, body.MaxTokens)
			assert.Equal(t, tc.fitted, res.Fit.MaxTokens)
		})
	}
}
