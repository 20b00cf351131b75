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
			content, native := recordedReply(t, tc.fixture)
			assert.Zero(t, native, "the server parsed no native call")
			got, ok := ParseTextCalls(content)
			assert.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

// recordedReply is the content of a recorded Qwen reply and how many native calls it had.
func recordedReply(t *testing.T, fixture string) (string, int) {
	t.Helper()
	data, err := os.ReadFile("../scripted/testdata/real-servers/llama-server-0c1e570-qwen/" + fixture + ".body")
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
	return reply.Choices[0].Message.Content, len(reply.Choices[0].Message.ToolCalls)
}

// The same model, asked to read three files and edit, wrote every call of its plan in one reply:
// seven JSON lines in one fence, the same inside <tools> (its template's own tag), and fourteen
// {"type": "function", "function": ...} lines inside <tools>. Every call is read, in order.
func TestParseRecordedQwenSeveralTextCalls(t *testing.T) {
	cases := []struct {
		fixture string
		names   []string
	}{
		{"agent_text_calls_fenced", []string{"read_file", "read_file", "read_file", "edit_file", "edit_file", "edit_file", "finish"}},
		{"agent_text_calls_tools_tag", []string{"read_file", "read_file", "read_file", "edit_file", "edit_file", "edit_file", "finish"}},
		{"agent_text_calls_tools_typed", []string{"read_file", "read_file", "read_file", "grep", "grep", "grep", "edit_file", "edit_file", "edit_file",
			"write_file", "write_file", "write_file", "run_verify", "finish"}},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			content, native := recordedReply(t, tc.fixture)
			assert.Zero(t, native, "the server parsed no native call")
			got, ok := ParseTextCalls(content)
			require.True(t, ok)
			var names []string
			for _, c := range got {
				names = append(names, c.Name)
			}
			assert.Equal(t, tc.names, names)
			assert.Equal(t, `{"path": "README.md"}`, got[0].Arguments)
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
		{"prose around tags", `Sure. <tool_call>{"name":"run_verify"}</tool_call>`, []client.ToolCall{{Name: "run_verify", Arguments: `{}`}}},
		{"prose then fence", "Here is the code:\n\n```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```\nDone.", []client.ToolCall{{Name: "read_file", Arguments: `{"path":"a"}`}}},
		{"two fences", "```json\n{\"name\":\"run_verify\"}\n```\n\n```json\n{\"name\":\"finish\",\"arguments\":{\"summary\":\"s\"}}\n```",
			[]client.ToolCall{{Name: "run_verify", Arguments: `{}`}, {Name: "finish", Arguments: `{"summary":"s"}`}}},
		{"objects one after another", "{\"name\":\"run_verify\"}\n{\"name\":\"list_dir\",\"arguments\":{\"path\":\".\"}}",
			[]client.ToolCall{{Name: "run_verify", Arguments: `{}`}, {Name: "list_dir", Arguments: `{"path":"."}`}}},
		{"typed function", `{"type":"function","function":{"name":"list_dir","arguments":{"path":"."}}}`, []client.ToolCall{{Name: "list_dir", Arguments: `{"path":"."}`}}},
		{"tag in a fence", "```\n<tool_call>\n{\"name\":\"run_verify\"}\n</tool_call>\n```", []client.ToolCall{{Name: "run_verify", Arguments: `{}`}}},
		{"a fence of code beside a call", "```go\nfunc Add() {}\n```\n```json\n{\"name\":\"run_verify\"}\n```", nil},
		{"prose inside a block", "<tools>\nFirst I read.\n{\"name\":\"run_verify\"}\n</tools>", nil},
		{"a call beside a fence", "```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```\n{\"name\":\"finish\",\"arguments\":{\"summary\":\"s\"}}", nil},
		{"doubled braces", `{{"name": "read_file", "arguments": {"path": "add.go"}}}`, nil},
		{"an object of another kind", `{"name":"read_file","arguments":{"path":"a"}} ["x"]`, nil},
		{"typed as something else", `{"type":"tool","function":{"name":"list_dir"}}`, nil},
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
