package client

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func recorded(t *testing.T, name string) scripted.Reply {
	t.Helper()
	data, err := os.ReadFile("../scripted/testdata/real-servers/" + name)
	require.NoError(t, err)
	var body json.RawMessage
	require.NoError(t, json.Unmarshal(data[:len(data)-len(trailer(data))], &body))
	return scripted.Reply{JSON: body}
}

// trailer is the status line the recordings of tool replies carry after their body.
func trailer(data []byte) []byte {
	for i := len(data) - 2; i >= 0; i-- {
		if data[i] == '\n' {
			return data[i:]
		}
	}
	return nil
}

// The recorded tool-call replies of real servers decode into calls: Ollama's with its ids,
// llama-server's with content null and an empty id.
func TestChatDecodesRecordedToolCalls(t *testing.T) {
	cases := []struct {
		fixture string
		id      string
	}{
		{"ollama-extra/tools_forced.json", "call_7gq07ppm"},
		{"llama-server-extra/tools_required_enum.json", ""},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("lmstudio"))
			s.On("POST", "/v1/chat/completions", recorded(t, tc.fixture))
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 64, Stream: true,
				Messages: []Message{{Role: "user", Content: "weather?"}},
				Tools:    []Tool{{Name: "get_weather", Parameters: map[string]any{"type": "object"}}}})
			require.NoError(t, err, "a reply that calls a tool is not an empty answer when tools were offered")
			assert.Equal(t, []ToolCall{{ID: tc.id, Name: "get_weather", Arguments: `{"city":"Paris"}`}}, res.ToolCalls)
			assert.Equal(t, rails.ClassAnswer, res.Class, "a reply that calls the tools offered is an answer")
			reqs := s.RequestsTo("/v1/chat/completions")
			require.Len(t, reqs, 1)
			var sent map[string]any
			require.NoError(t, json.Unmarshal(reqs[0].Body, &sent))
			assert.Nil(t, sent["stream"], "llama-server refuses tools with stream: a request with tools is never streamed")
			assert.Len(t, sent["tools"], 1)
		})
	}
}

// A conversation with tool calls goes back to the server in the OpenAI shape: the assistant's
// calls, then a tool message per call naming its id.
func TestChatSendsToolTurns(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", runtest.Answer("done"))
	_, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 64, Messages: []Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []ToolCall{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{Role: "tool", ToolCallID: "call_1", Content: "package a"},
	}})
	require.NoError(t, err)
	var sent struct {
		Messages []map[string]any `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(s.RequestsTo("/v1/chat/completions")[0].Body, &sent))
	require.Len(t, sent.Messages, 3)
	calls := sent.Messages[1]["tool_calls"].([]any)
	fn := calls[0].(map[string]any)["function"].(map[string]any)
	assert.Equal(t, "read_file", fn["name"])
	assert.Equal(t, `{"path":"a.go"}`, fn["arguments"])
	assert.Equal(t, "tool", sent.Messages[2]["role"])
	assert.Equal(t, "call_1", sent.Messages[2]["tool_call_id"])
}

// An argument object (instead of the JSON text OpenAI specifies) is read as its text.
func TestDecodeToolCallsArgumentObject(t *testing.T) {
	got := decodeToolCalls([]json.RawMessage{json.RawMessage(`{"id":"x","function":{"name":"f","arguments":{"a":1}}}`), json.RawMessage(`{"function":{}}`)})
	assert.Equal(t, []ToolCall{{ID: "x", Name: "f", Arguments: `{"a":1}`}, {}}, got)
}
