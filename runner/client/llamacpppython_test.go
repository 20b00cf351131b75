package client

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/scripted"
)

// Recorded from llama-cpp-python 0.3.36's server (python -m llama_cpp.server, --n_ctx 1024)
// serving Qwen2.5-Coder-1.5B-Instruct.
const lcpDir = "llama-cpp-python-0.3.36-qwen/"

func lcpServer(t *testing.T) *scripted.Server {
	t.Helper()
	srv := scripted.New()
	t.Cleanup(srv.Close)
	srv.On("GET", "/v1/models", scripted.MustFixture(lcpDir+"models"))
	srv.On("GET", "/openapi.json", scripted.MustFixture(lcpDir+"openapi"))
	return srv
}

// lcpRequest is the recorded request named, as a ChatRequest.
func lcpRequest(t *testing.T, name string) ChatRequest {
	t.Helper()
	data, err := os.ReadFile("../scripted/testdata/real-servers/" + lcpDir + name + ".request.json")
	require.NoError(t, err)
	var wire struct {
		Model     string `json:"model"`
		MaxTokens int64  `json:"max_tokens"`
		Messages  []struct{ Role, Content string }
		Stream    bool `json:"stream"`
	}
	require.NoError(t, json.Unmarshal(data, &wire))
	req := ChatRequest{Model: wire.Model, MaxTokens: wire.MaxTokens, Stream: wire.Stream, Effort: "low"}
	for _, m := range wire.Messages {
		req.Messages = append(req.Messages, Message{Role: m.Role, Content: m.Content})
	}
	return req
}

func TestProbeNamesLlamaCppPython(t *testing.T) {
	info, err := clientFor(t, lcpServer(t)).Probe(context.Background())
	require.NoError(t, err)
	assert.Equal(t, rails.LlamaCppPython, info.Kind)
	assert.Equal(t, "0.3.36", info.Version)
	require.Len(t, info.Models, 1)
	assert.Zero(t, info.Models[0].Context, "it serves no context window")
}

// Streamed, it sends no usage (recorded: no chunk carries one), so a stream is asked unstreamed,
// where it reports the tokens read and written; and it takes no thinking switch.
func TestLlamaCppPythonIsAskedUnstreamed(t *testing.T) {
	var streamed struct {
		Usage json.RawMessage `json:"usage"`
	}
	data, err := os.ReadFile("../scripted/testdata/real-servers/" + lcpDir + "chat_stream.body")
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		if chunk, ok := strings.CutPrefix(line, "data: {"); ok {
			require.NoError(t, json.Unmarshal([]byte("{"+chunk), &streamed))
			assert.Empty(t, streamed.Usage, "the recorded stream carries no usage")
		}
	}

	srv := lcpServer(t)
	srv.On("POST", "/v1/chat/completions", scripted.MustFixture(lcpDir+"chat_plain"))
	res, err := clientFor(t, srv).Chat(context.Background(), lcpRequest(t, "chat_stream"))
	require.NoError(t, err)
	require.NotNil(t, res.Usage.In)
	assert.EqualValues(t, 51, *res.Usage.In)
	assert.EqualValues(t, 20, *res.Usage.Out)
	assert.False(t, res.Streamed)
	assert.Nil(t, res.Decode, "no timings and no stream: the rate is unknown")
	sent := srv.RequestsTo("/v1/chat/completions")
	require.Len(t, sent, 1)
	var body map[string]any
	require.NoError(t, json.Unmarshal(sent[0].Body, &body))
	assert.NotContains(t, body, "stream")
	assert.NotContains(t, body, "reasoning_effort")
	assert.NotContains(t, body, "chat_template_kwargs")
}

// A prompt over its context: HTTP 400 in OpenAI's words, unstreamed (streamed, it is HTTP 200
// and an empty body). The refusal names the context, and a later prompt is measured against it
// before it is sent.
func TestLlamaCppPythonOverflowIsAnOverflow(t *testing.T) {
	srv := lcpServer(t)
	srv.On("POST", "/v1/chat/completions", scripted.MustFixture(lcpDir+"chat_overflow"))
	c := clientFor(t, srv)
	req := lcpRequest(t, "chat_stream_overflow")
	req.Narrow = "{lines} or {symbol}"
	_, err := c.Chat(context.Background(), req)
	var over *ServerContextError
	require.ErrorAs(t, err, &over)
	assert.EqualValues(t, 1024, over.Context)
	assert.EqualValues(t, 5924, over.Prompt)
	assert.Equal(t, "llama-cpp-python refused the prompt (5924 tokens, counted by the server) as over the 1024-token context qwen2.5-coder-1.5b-instruct has loaded; "+
		"Narrow the input (--lines or --symbol), or load the model with a larger context on the server", err.Error())

	// The context is known now: the same prompt is refused before it is sent.
	_, err = c.Chat(context.Background(), req)
	var fit *ContextError
	require.ErrorAs(t, err, &fit)
	assert.Len(t, srv.RequestsTo("/v1/chat/completions"), 1)
}

// An empty stream (HTTP 200, no event: what llama-cpp-python sends for a prompt over its
// context) from a server locum cannot name says what it was, not a colon and nothing.
func TestEmptyStreamSaysSo(t *testing.T) {
	srv := scripted.New()
	t.Cleanup(srv.Close)
	srv.On("GET", "/v1/models", scripted.Reply{JSON: json.RawMessage(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"someone"}]}`)})
	srv.On("POST", "/v1/chat/completions", scripted.MustFixture(lcpDir+"chat_stream_overflow"))
	_, err := clientFor(t, srv).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 64, Stream: true, Messages: []Message{{Role: "user", Content: "hi"}}})
	var reply *rails.ReplyError
	require.True(t, errors.As(err, &reply), "%v", err)
	assert.Equal(t, rails.ClassMalformed, reply.Class)
	assert.Contains(t, err.Error(), "the server's reply is not a chat completion: the stream carried no chunk (an empty stream is what some servers send for a prompt over the model's context)")
}
