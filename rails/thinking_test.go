package rails

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCapThinking(t *testing.T) {
	cases := []struct {
		effort string
		want   ThinkingCap
	}{
		{"none", ThinkingCap{Off: true, Level: "low"}},
		{"low", ThinkingCap{Off: true, Level: "low"}},
		{"medium", ThinkingCap{Level: "medium"}},
		{"high", ThinkingCap{Level: "high"}},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, CapThinking(tc.effort), tc.effort)
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
	cases := []struct {
		name, content, answer, thinking string
	}{
		{"opening block", "<think>a</think>\nanswer", "answer", "a"},
		{"opening block after blank lines", "\n\n<think>a</think>answer", "answer", "a"},
		{"only the opening block", "<think>a</think>y<think>b</think>z", "y<think>b</think>z", "a"},
		{"back-to-back opening blocks", "<think>a</think>\n<think>b</think>z", "z", "a\nb"},
		{"opened by the template", "reasoning opened by the template</think>\nanswer", "answer", "reasoning opened by the template"},
		{"unclosed opening block", "<think>still going", "", "still going"},
		{"a tag inside code is the answer's", "```go\nconst end = \"</think>\"\n```", "```go\nconst end = \"</think>\"\n```", ""},
		{"a tag after an answer line", "Here it is:\n```\nx := strings.Index(s, \"<think>\")\ny := strings.Index(s, \"</think>\")\n```", "Here it is:\n```\nx := strings.Index(s, \"<think>\")\ny := strings.Index(s, \"</think>\")\n```", ""},
		{"a tag in an edit block", "<<<<<<< SEARCH\na\n=======\n</think>\n>>>>>>> REPLACE", "<<<<<<< SEARCH\na\n=======\n</think>\n>>>>>>> REPLACE", ""},
		{"no tags", "plain", "plain", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, th := StripThink(tc.content)
			assert.Equal(t, tc.answer, a)
			assert.Equal(t, tc.thinking, th)
		})
	}
}

func TestReplyErrorSaysWhatToDo(t *testing.T) {
	assert.Contains(t, (&ReplyError{Class: ClassLostToThinking, MaxOutputTokens: 4096}).Error(), "lower --effort")
	assert.Contains(t, (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 4096}).Error(), "raise --max-output-tokens")
	assert.NotContains(t, (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 4096}).Error(), "--lines", "a mode without --lines is not told to use it")
	// A server that lowers max_tokens to the room its context leaves stopped the reply short of
	// what was asked: more room would change nothing.
	short := (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 4096, Written: 24, Narrow: "{lines} or {symbol}"}).Error()
	assert.Equal(t, "the answer was cut off at 24 output tokens, short of the 4096 asked (finish_reason length): the model's loaded context ran out; narrow the input with --lines or --symbol, or load the model with a larger context on the server", short)
	assert.Contains(t, (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 4096, Narrow: "{lines}"}).Error(), "narrow the input with --lines")
	// A room a mode sized from a setting of its own is that setting's to raise.
	room := (&ReplyError{Class: ClassTruncated, MaxOutputTokens: 652, Room: "{max_words}", Narrow: "{lines}"}).Error()
	assert.Equal(t, "the answer was cut off at 652 output tokens (finish_reason length), the room --max-words gives; raise --max-words for a longer answer (the room grows with it), or set the room yourself with --max-output-tokens, or narrow the input with --lines", room)
	assert.Contains(t, (&ReplyError{Class: ClassThinkOnly}).Error(), "lower --effort")
	for _, class := range []ReplyClass{ClassThinkOnly, ClassLostToThinking} {
		msg := (&ReplyError{Class: class, MaxOutputTokens: 4096, Effort: "none"}).Error()
		assert.NotContains(t, msg, "lower --effort", "no advice to lower an effort already at none")
		assert.Contains(t, msg, "thinks even at --effort none")
	}
}

func FuzzClassify(f *testing.F) {
	f.Add("<think>a</think>b", "", "stop")
	f.Add("<think>", "r", "length")
	f.Fuzz(func(t *testing.T, content, reasoning, finish string) {
		c := Classify(Reply{Content: content, Reasoning: reasoning, FinishReason: finish})
		if c.Class == ClassAnswer {
			assert.NotEmpty(t, c.Answer)
			assert.False(t, strings.HasPrefix(strings.TrimSpace(c.Answer), "<think>"), "an opening think block reached the answer")
			assert.True(t, strings.HasSuffix(content, c.Answer), "the answer is not the reply's own text")
		}
	})
}
