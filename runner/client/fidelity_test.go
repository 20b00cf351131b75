package client

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/scripted"
)

// The model's words reach the mode as the server sent them: the NaN repair runs only on a body
// that did not parse, and never inside a string.
func TestNonFiniteRepairLeavesTheAnswerAlone(t *testing.T) {
	code := "const limits = {max: Infinity, min: -Infinity, gap: NaN};"
	quoted, _ := json.Marshal(code)
	cases := []struct {
		name   string
		body   string
		stream bool
		in     *int64
		answer string
	}{
		{"valid JSON is never touched", `{"choices":[{"finish_reason":"stop","message":{"content":` + string(quoted) + `}}],"usage":{"prompt_tokens":7,"completion_tokens":3}}`, false, ptr(7), code},
		{"a bare NaN figure is read as not reported", `{"choices":[{"finish_reason":"stop","message":{"content":` + string(quoted) + `}}],"usage":{"prompt_tokens":NaN,"completion_tokens":3}}`, false, nil, code},
		{"the text after a colon inside a string stays", `{"choices":[{"finish_reason":"stop","message":{"content":"a: NaN, b: [Infinity] \"c\": -Infinity"}}],"usage":{"prompt_tokens":Infinity}}`, false, nil, `a: NaN, b: [Infinity] "c": -Infinity`},
		{"a streamed chunk is repaired the same way", "", true, nil, code},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			require.NoError(t, s.Mimic("lmstudio"))
			reply := scripted.Reply{Body: tc.body}
			if tc.stream {
				reply = scripted.Reply{Headers: map[string]string{"Content-Type": "text/event-stream"}, Body: "data: {\"choices\":[{\"delta\":{\"content\":" + string(quoted) + "},\"finish_reason\":null}]}\n\n" +
					"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":NaN,\"completion_tokens\":3}}\n\ndata: [DONE]\n\n"}
			}
			s.On("POST", "/v1/chat/completions", reply)
			res, err := clientFor(t, s).Chat(context.Background(), ChatRequest{Model: "m", MaxTokens: 64, Stream: tc.stream, Messages: []Message{{Role: "user", Content: "hi"}}})
			require.NoError(t, err)
			assert.Equal(t, rails.ClassAnswer, res.Class)
			assert.Equal(t, tc.answer, res.Answer)
			assert.Equal(t, tc.in, res.Usage.In)
		})
	}
}

func TestRepairNonFinite(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"a":NaN}`, `{"a":null}`},
		{`{"a": -Infinity, "b":[1, Infinity]}`, `{"a": null, "b":[1, null]}`},
		{`{"s":"x: NaN","t":"\": Infinity"}`, `{"s":"x: NaN","t":"\": Infinity"}`},
		{`{"a":NaNa}`, `{"a":NaNa}`},
		{`{"a":Infinityx}`, `{"a":Infinityx}`},
	}
	for _, tc := range cases {
		got, _ := repairNonFinite([]byte(tc.in))
		assert.Equal(t, tc.want, string(got), tc.in)
	}
}
