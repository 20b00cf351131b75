package rails

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestThinkingFields(t *testing.T) {
	plain := ModelThinking{Known: true}
	boolThinker := ModelThinking{Known: true, Thinks: true}
	levels := ModelThinking{Known: true, Thinks: true, Levels: true}
	noKwargs := map[string]any{"enable_thinking": false}
	cases := []struct {
		name   string
		kind   ServerKind
		effort string
		model  ModelThinking
		want   map[string]any
	}{
		{"ollama plain model gets nothing", Ollama, "low", plain, map[string]any{}},
		{"ollama unknown model gets nothing", Ollama, "low", ModelThinking{}, map[string]any{}},
		{"ollama boolean thinker low", Ollama, "low", boolThinker, map[string]any{"reasoning_effort": "none"}},
		{"ollama boolean thinker none", Ollama, "none", boolThinker, map[string]any{"reasoning_effort": "none"}},
		{"ollama boolean thinker high", Ollama, "high", boolThinker, map[string]any{}},
		{"ollama levels low", Ollama, "low", levels, map[string]any{"reasoning_effort": "low"}},
		{"ollama levels none", Ollama, "none", levels, map[string]any{"reasoning_effort": "low"}},
		{"llama-server low", LlamaServer, "low", ModelThinking{}, map[string]any{"chat_template_kwargs": noKwargs}},
		{"llama-server medium", LlamaServer, "medium", ModelThinking{}, map[string]any{}},
		{"lm studio low", LMStudio, "low", ModelThinking{}, map[string]any{"reasoning_effort": "low", "enable_thinking": false}},
		{"lm studio high", LMStudio, "high", ModelThinking{}, map[string]any{"reasoning_effort": "high"}},
		{"vllm none", VLLM, "none", ModelThinking{}, map[string]any{"reasoning_effort": "low", "chat_template_kwargs": noKwargs}},
		{"vllm medium", VLLM, "medium", ModelThinking{}, map[string]any{"reasoning_effort": "medium"}},
		{"unknown low", Unknown, "low", ModelThinking{}, map[string]any{"reasoning_effort": "low", "chat_template_kwargs": noKwargs}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ThinkingFields(tc.kind, tc.effort, tc.model))
		})
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		name   string
		reply  Reply
		class  ReplyClass
		answer string
	}{
		{"answer", Reply{Content: "done", FinishReason: "stop"}, ClassAnswer, "done"},
		{"answer after think block", Reply{Content: "<think>hmm</think>\n\nok", FinishReason: "stop"}, ClassAnswer, "ok"},
		{"answer with reasoning field", Reply{Content: "ok", Reasoning: "thought", FinishReason: "stop"}, ClassAnswer, "ok"},
		{"empty", Reply{Content: "  \n", FinishReason: "stop"}, ClassEmpty, "  \n"},
		{"tool call instead of answer", Reply{ToolCalls: 1, FinishReason: "tool_calls"}, ClassEmpty, ""},
		{"think only in field", Reply{Content: "", Reasoning: "lots", FinishReason: "stop"}, ClassThinkOnly, ""},
		{"think only inline", Reply{Content: "<think>lots</think>", FinishReason: "stop"}, ClassThinkOnly, ""},
		{"truncated answer", Reply{Content: "partial", FinishReason: "length"}, ClassTruncated, "partial"},
		{"truncated empty", Reply{Content: "", FinishReason: "length"}, ClassTruncated, ""},
		{"lost to thinking, ollama shape", Reply{Content: "", Reasoning: "story", FinishReason: "length"}, ClassLostToThinking, ""},
		{"lost to thinking, unclosed think", Reply{Content: "<think>still going", FinishReason: "length"}, ClassLostToThinking, ""},
		{"malformed", Reply{Malformed: "no choices"}, ClassMalformed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Classify(tc.reply)
			assert.Equal(t, tc.class, c.Class)
			if tc.class == ClassAnswer || tc.class == ClassTruncated {
				assert.Equal(t, tc.answer, c.Answer)
			}
		})
	}
}

func TestStripThink(t *testing.T) {
	a, th := StripThink("x<think>a</think>y<think>b</think>z")
	assert.Equal(t, "xyz", a)
	assert.Equal(t, "a\nb", th)
	a, th = StripThink("reasoning opened by the template</think>\nanswer")
	assert.Equal(t, "answer", a)
	assert.Equal(t, "reasoning opened by the template", th)
}

func TestReplyErrorSaysWhatToDo(t *testing.T) {
	assert.Contains(t, (&ReplyError{Class: ClassLostToThinking, MaxOutputTokens: 4096}).Error(), "lower --effort")
	assert.Contains(t, (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 4096}).Error(), "raise --max-output-tokens")
	assert.Contains(t, (&ReplyError{Class: ClassThinkOnly}).Error(), "lower --effort")
}

func FuzzClassify(f *testing.F) {
	f.Add("<think>a</think>b", "", "stop")
	f.Add("<think>", "r", "length")
	f.Fuzz(func(t *testing.T, content, reasoning, finish string) {
		c := Classify(Reply{Content: content, Reasoning: reasoning, FinishReason: finish})
		if c.Class == ClassAnswer {
			assert.NotEmpty(t, c.Answer)
			assert.NotContains(t, c.Answer, "<think>")
		}
	})
}
