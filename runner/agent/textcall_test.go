package agent

import (
	"encoding/json"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/client"
)

// A real coding model (Qwen2.5-Coder-1.5B on llama-server 0c1e570 with --jinja, recorded by the
// real-model tier) wrote its tool calls as text in content, fenced and bare, not as tool_calls.
func TestParseRecordedQwenTextCalls(t *testing.T) {
	cases := []struct {
		fixture string
		want    []client.ToolCall
	}{
		{"agent_text_call_fenced", []client.ToolCall{{Name: "edit_file", Arguments: `{"path": "calc.go", "replace": "return a + b", "search": "return a + b"}`}}},
		{"agent_text_call_bare", []client.ToolCall{{Name: "read_file", Arguments: `{"path": "calc.go"}`}}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			data, err := os.ReadFile("../scripted/testdata/real-servers/llama-server-0c1e570-qwen/" + tc.fixture + ".body")
			require.NoError(t, err)
			var reply struct {
				Choices []struct {
					Message struct {
						Content   string            `json:"content"`
						ToolCalls []json.RawMessage `json:"tool_calls"`
					} `json:"message"`
				} `json:"choices"`
			}
			require.NoError(t, json.Unmarshal(data, &reply))
			require.Len(t, reply.Choices, 1)
			assert.Empty(t, reply.Choices[0].Message.ToolCalls, "the server parsed no native call")
			got, ok := ParseTextCalls(reply.Choices[0].Message.Content)
			assert.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseTextCalls(t *testing.T) {
	cases := []struct {
		name, content string
		want          []client.ToolCall
	}{
		{"bare object", `{"name":"read_file","arguments":{"path":"a.go"}}`, []client.ToolCall{{Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{"arguments as text", `{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}`, []client.ToolCall{{Name: "read_file", Arguments: `{"path":"a.go"}`}}},
		{"llama-server tool_call", `{ "tool_call" : { "name" : "list_dir" ,"arguments" : { "path" : "." } } }`, []client.ToolCall{{Name: "list_dir", Arguments: `{ "path" : "." }`}}},
		{"function wrapper", `{"function":{"name":"finish","parameters":{"summary":"ok"}}}`, []client.ToolCall{{Name: "finish", Arguments: `{"summary":"ok"}`}}},
		{"tags", "<tool_call>\n{\"name\":\"run_verify\"}\n</tool_call>\n<tool_call>{\"name\":\"finish\",\"arguments\":{\"summary\":\"s\"}}</tool_call>",
			[]client.ToolCall{{Name: "run_verify", Arguments: `{}`}, {Name: "finish", Arguments: `{"summary":"s"}`}}},
		{"fenced", "```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```", []client.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}}},
		// Ambiguous or not a call: never guessed.
		{"prose around", `I will call {"name":"read_file","arguments":{"path":"a"}} now`, nil},
		{"prose around tags", `Sure. <tool_call>{"name":"run_verify"}</tool_call>`, nil},
		{"unknown tool", `{"name":"get_weather","arguments":{"city":"Paris"}}`, nil},
		{"extra key", `{"name":"read_file","arguments":{"path":"a"},"id":"x"}`, nil},
		{"both argument keys", `{"name":"read_file","arguments":{},"parameters":{}}`, nil},
		{"arguments not an object", `{"name":"read_file","arguments":[1]}`, nil},
		{"duplicate key", `{"name":"read_file","name":"finish","arguments":{}}`, nil},
		{"cut off (llama-server, finish_reason length)", `{ "tool_call" : { "name" : "get_weather" ,"arguments" : { "city" : "Y`, nil},
		{"plain text", `The answer is 4.`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseTextCalls(tc.content)
			assert.Equal(t, tc.want != nil, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func FuzzParseTextCalls(f *testing.F) {
	for _, s := range []string{`{"name":"read_file","arguments":{"path":"a.go"}}`, "<tool_call>{\"name\":\"finish\"}</tool_call>",
		"```json\n{\"tool_call\":{\"name\":\"grep\",\"arguments\":\"{}\"}}\n```", `{"function":{"name":"x"}}`, "<tool_call><tool_call>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, ok := ParseTextCalls(s)
		if !ok {
			if calls != nil {
				t.Fatalf("calls without ok: %v", calls)
			}
			return
		}
		for _, c := range calls {
			if !knownTool(c.Name) {
				t.Fatalf("unknown tool %q parsed", c.Name)
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal([]byte(c.Arguments), &obj) != nil {
				t.Fatalf("arguments not an object: %q", c.Arguments)
			}
		}
	})
}

func FuzzParseArgs(f *testing.F) {
	f.Add("edit_file", `{"path":"a","search":"x","replace":"y"}`)
	f.Add("read_file", `{"path":"a","start_line":1e400}`)
	f.Add("finish", `{"summary":null}`)
	f.Fuzz(func(t *testing.T, name, text string) {
		a, err := ParseArgs(name, text)
		if err != nil {
			if _, ok := err.(*MalformedError); !ok {
				t.Fatalf("error of type %T", err)
			}
			return
		}
		for k := range a {
			if !utf8.ValidString(k) && json.Valid([]byte(text)) {
				t.Fatalf("key %q", k)
			}
		}
		if !knownTool(name) {
			t.Fatalf("unknown tool %q accepted", name)
		}
	})
}
