package agent

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/untrusted"
)

// Small models often write a tool call as text in content instead of a native call. These are
// the shapes seen: a bare JSON object {"name", "arguments"}; llama-server's
// {"tool_call": {"name", "arguments"}}; {"function": {...}}; and <tool_call>...</tool_call>
// blocks (Qwen and Hermes templates), optionally inside a ```json fence.

var (
	toolCallTag = regexp.MustCompile(`(?s)<tool_call>\s*(.*?)\s*</tool_call>`)
	fence       = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*\\n(.*?)\\n?```$")
)

// ParseTextCalls reads tool calls written as text. It answers only when the reading is
// unambiguous: the whole content is the call or calls (no prose around them), each names a tool
// that exists, and its arguments are a JSON object. Anything else is not a call.
func ParseTextCalls(content string) ([]client.ToolCall, bool) {
	s := strings.TrimSpace(content)
	if m := fence.FindStringSubmatch(s); m != nil {
		s = strings.TrimSpace(m[1])
	}
	var bodies []string
	if strings.Contains(s, "<tool_call>") {
		rest := strings.TrimSpace(toolCallTag.ReplaceAllString(s, ""))
		if rest != "" {
			return nil, false
		}
		for _, m := range toolCallTag.FindAllStringSubmatch(s, -1) {
			bodies = append(bodies, m[1])
		}
	} else {
		bodies = []string{s}
	}
	if len(bodies) == 0 || len(bodies) > 8 {
		return nil, false
	}
	var out []client.ToolCall
	for _, body := range bodies {
		tc, ok := parseOne(body)
		if !ok {
			return nil, false
		}
		out = append(out, tc)
	}
	return out, true
}

func parseOne(body string) (client.ToolCall, bool) {
	if !strings.HasPrefix(body, "{") {
		return client.ToolCall{}, false
	}
	var obj map[string]json.RawMessage
	if untrusted.Unmarshal([]byte(body), &obj) != nil {
		return client.ToolCall{}, false
	}
	for _, wrap := range []string{"tool_call", "function"} {
		if inner, ok := obj[wrap]; ok && len(obj) == 1 {
			var o map[string]json.RawMessage
			if untrusted.Unmarshal(inner, &o) != nil {
				return client.ToolCall{}, false
			}
			obj = o
		}
	}
	var name string
	if json.Unmarshal(obj["name"], &name) != nil || !knownTool(name) {
		return client.ToolCall{}, false
	}
	var argKey string
	for _, k := range []string{"arguments", "parameters"} {
		if _, ok := obj[k]; ok {
			if argKey != "" {
				return client.ToolCall{}, false
			}
			argKey = k
		}
	}
	if len(obj) != 1 && (argKey == "" || len(obj) != 2) {
		return client.ToolCall{}, false
	}
	raw := obj[argKey]
	if argKey == "" {
		raw = json.RawMessage("{}")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		raw = json.RawMessage(text)
	}
	var check map[string]json.RawMessage
	if untrusted.Unmarshal(raw, &check) != nil {
		return client.ToolCall{}, false
	}
	return client.ToolCall{Name: name, Arguments: string(raw)}, true
}
