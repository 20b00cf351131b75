package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strings"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/untrusted"
)

// Small models often write tool calls as text in content instead of native calls. These are the
// shapes seen from real models: a bare JSON object {"name", "arguments"}; llama-server's
// {"tool_call": {"name", "arguments"}}; {"function": {...}} with or without "type": "function";
// several objects one after another; and blocks holding them: a ``` fence, <tool_call>...
// </tool_call> (Qwen and Hermes templates), <tools>...</tools> (Qwen2.5-Coder echoing its
// template's own tag), nested in one another.

// textBlock matches a fence or a tag block; the first group that matched names which.
var textBlock = regexp.MustCompile("(?s)```[a-zA-Z]*[ \\t]*\\n(.*?)```|<tool_call>(.*?)</tool_call>|<tools>(.*?)</tools>")

// ParseTextCalls reads tool calls written as text, every one in order. A reply counts as calls
// only when the reading is unambiguous: either the whole content is calls, or every block in it
// (fence or tag) holds calls and nothing else, with any prose outside the blocks; each call names
// a tool that exists and its arguments are a JSON object. Anything else is not a call.
func ParseTextCalls(content string) ([]client.ToolCall, bool) {
	s := strings.TrimSpace(content)
	if !textBlock.MatchString(s) {
		return parseObjects(s)
	}
	// A call in the prose beside the blocks would be run or dropped by a guess: neither.
	if holdsCall(textBlock.ReplaceAllString(s, "\n")) {
		return nil, false
	}
	var out []client.ToolCall
	for _, m := range textBlock.FindAllStringSubmatch(s, -1) {
		calls, ok := parseBlock(m[1] + m[2] + m[3])
		if !ok {
			return nil, false
		}
		out = append(out, calls...)
	}
	return out, len(out) > 0
}

// maxProseObjects bounds how many "{" of the prose are tried as the start of a call.
const maxProseObjects = 64

// holdsCall says whether prose holds a JSON object that reads as a call.
func holdsCall(prose string) bool {
	for tried := 0; tried < maxProseObjects; tried++ {
		i := strings.IndexByte(prose, '{')
		if i < 0 {
			return false
		}
		prose = prose[i:]
		var raw json.RawMessage
		if json.NewDecoder(strings.NewReader(prose)).Decode(&raw) == nil {
			if _, ok := parseOne(raw); ok {
				return true
			}
		}
		prose = prose[1:]
	}
	return false
}

// parseBlock reads the calls inside one block: blocks nested in it, with nothing outside them, or
// JSON objects.
func parseBlock(body string) ([]client.ToolCall, bool) {
	body = strings.TrimSpace(body)
	if !textBlock.MatchString(body) {
		return parseObjects(body)
	}
	if strings.TrimSpace(textBlock.ReplaceAllString(body, "")) != "" {
		return nil, false
	}
	var out []client.ToolCall
	for _, m := range textBlock.FindAllStringSubmatch(body, -1) {
		calls, ok := parseObjects(strings.TrimSpace(m[1] + m[2] + m[3]))
		if !ok {
			return nil, false
		}
		out = append(out, calls...)
	}
	return out, true
}

// parseObjects reads one or more JSON objects separated by white space, each a call.
func parseObjects(s string) ([]client.ToolCall, bool) {
	if !strings.HasPrefix(s, "{") {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var out []client.ToolCall
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil || !bytes.HasPrefix(raw, []byte("{")) {
			return nil, false
		}
		tc, ok := parseOne(raw)
		if !ok {
			return nil, false
		}
		out = append(out, tc)
	}
	return out, len(out) > 0
}

func parseOne(body []byte) (client.ToolCall, bool) {
	var obj map[string]json.RawMessage
	if untrusted.Unmarshal(body, &obj) != nil {
		return client.ToolCall{}, false
	}
	for _, wrap := range []string{"tool_call", "function"} {
		inner, ok := obj[wrap]
		if !ok {
			continue
		}
		var kind string
		typed := len(obj) == 2 && wrap == "function" && json.Unmarshal(obj["type"], &kind) == nil && kind == "function"
		if len(obj) != 1 && !typed {
			continue
		}
		var o map[string]json.RawMessage
		if untrusted.Unmarshal(inner, &o) != nil {
			return client.ToolCall{}, false
		}
		obj = o
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
