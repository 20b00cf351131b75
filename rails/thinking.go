package rails

import (
	"fmt"
	"strings"
	"unicode"
)

// ServerKind is which OpenAI-compatible server answers. What sets one kind apart from another
// (how a probe knows it, the switch it obeys for thinking, what it says of its models) is
// runner/client's, in a file per kind.
type ServerKind string

// The servers locum knows.
const (
	LMStudio    ServerKind = "lmstudio"
	Ollama      ServerKind = "ollama"
	LlamaServer ServerKind = "llama-server"
	// LlamaCppPython is llama-cpp-python's server (python -m llama_cpp.server).
	LlamaCppPython ServerKind = "llama-cpp-python"
	VLLM           ServerKind = "vllm"
	Unknown        ServerKind = "unknown"
)

// ThinkingCap is what an effort asks of a model's thinking, whatever the server: each server is
// told it by a switch of its own (runner/client, the server's dialect).
type ThinkingCap struct {
	// Off: thinking should stop (effort none or low).
	Off bool
	// Level is the effort as a server or model that takes low/medium/high reads it.
	Level string
}

// CapThinking is the cap an effort sets. None and low both switch thinking off where a server has
// an off switch; a model that takes levels has no "none", so it gets "low", the least such models
// accept.
func CapThinking(effort string) ThinkingCap {
	level := effort
	if level == "none" {
		level = "low"
	}
	return ThinkingCap{Off: effort == "none" || effort == "low", Level: level}
}

// ReplyClass is what a chat reply turned out to be. Only ClassAnswer reaches a mode.
type ReplyClass string

// The reply classes.
const (
	ClassAnswer         ReplyClass = "answer"
	ClassEmpty          ReplyClass = "empty"
	ClassThinkOnly      ReplyClass = "think_only"
	ClassTruncated      ReplyClass = "truncated"
	ClassLostToThinking ReplyClass = "lost_to_thinking"
	ClassMalformed      ReplyClass = "malformed"
)

// Reply is the part of a chat reply the classifier reads.
type Reply struct {
	Content      string
	Reasoning    string // reasoning or reasoning_content, whichever the server sent
	FinishReason string
	ToolCalls    int
	// Malformed is set by the decoder when the body was not a chat completion.
	Malformed string
}

// Classified is a reply with its class, the answer with <think> blocks removed, and all thinking.
type Classified struct {
	Class    ReplyClass
	Answer   string
	Thinking string
	// Malformed is why a malformed reply is not a chat completion.
	Malformed string
}

// Classify sorts a reply into its class.
func Classify(r Reply) Classified {
	if r.Malformed != "" {
		return Classified{Class: ClassMalformed, Malformed: r.Malformed}
	}
	answer, inline := StripThink(r.Content)
	thinking := strings.TrimSpace(strings.TrimSpace(r.Reasoning) + "\n" + inline)
	c := Classified{Answer: answer, Thinking: thinking}
	empty := strings.TrimSpace(answer) == ""
	switch {
	case r.FinishReason == "length" && empty && thinking != "":
		c.Class = ClassLostToThinking
	case r.FinishReason == "length":
		c.Class = ClassTruncated
	case empty && thinking != "":
		c.Class = ClassThinkOnly
	case empty:
		c.Class = ClassEmpty
	default:
		c.Class = ClassAnswer
	}
	return c
}

// StripThink removes the think block that opens content and returns the rest and what was inside
// it. Only an opening block is thinking: a <think> or </think> later in the reply is the answer's
// own text (code that handles such tags), and reaches the mode unaltered. An unclosed opening
// <think> swallows the remainder: the model was cut off mid-thought.
func StripThink(content string) (answer, thinking string) {
	var think []string
	rest := content
	if !strings.HasPrefix(strings.TrimLeftFunc(rest, unicode.IsSpace), "<think>") {
		// A template that opens the block in the prompt leaves the reply starting inside it,
		// closed by a stray </think>. Text that already shows an answer's shape (a fence, an edit
		// marker, an opening tag) before that tag is an answer quoting the tag, not thinking.
		before, after, ok := strings.Cut(rest, "</think>")
		if !ok || answerShaped(before) {
			return content, ""
		}
		think = append(think, strings.TrimSpace(before))
		rest = after
	}
	for {
		body, ok := strings.CutPrefix(strings.TrimLeftFunc(rest, unicode.IsSpace), "<think>")
		if !ok {
			break
		}
		inside, after, closed := strings.Cut(body, "</think>")
		think = append(think, strings.TrimSpace(inside))
		if !closed {
			return "", strings.TrimSpace(strings.Join(think, "\n"))
		}
		rest = after
	}
	return strings.TrimLeft(rest, "\r\n"), strings.TrimSpace(strings.Join(think, "\n"))
}

func answerShaped(s string) bool {
	for _, mark := range []string{"```", "~~~", "<<<<<<<", "<think>"} {
		if strings.Contains(s, mark) {
			return true
		}
	}
	return false
}

// ReplyError is a reply that is not an answer. It is exit 2, with what to do.
type ReplyError struct {
	Class           ReplyClass
	MaxOutputTokens int64
	// Effort is the effort the request was sent with: advice to lower it is no advice at none.
	Effort string
	// Narrow names the settings that narrow the input as a template ("{lines} or {symbol}"),
	// for advice; "" for a mode without one.
	Narrow string
	// Room names the setting the reply's room follows, when a mode sizes max_tokens from one of
	// its own (summarize's max_words) rather than max_output_tokens: the lever a cut-off reply
	// calls for. "" where max_output_tokens is the room.
	Room   string
	Detail string
	// Written is how many tokens the server says the reply holds; 0 when it does not say.
	Written int64
}

// lessThinking is what to do about a model that thought instead of answering.
func (e *ReplyError) lessThinking(name func(string) string) string {
	if e.Effort == "none" {
		return "the model thinks even at " + name("effort") + " none: raise " + name("max_output_tokens") + ", or use a model that can answer without thinking"
	}
	return "lower " + name("effort") + " (try none) or raise " + name("max_output_tokens")
}

func (e *ReplyError) Error() string { return e.Words(FlagName) }

// Words is the message with the settings it advises on named by name.
func (e *ReplyError) Words(name func(string) string) string {
	switch e.Class {
	case ClassEmpty:
		msg := "the model returned an empty answer; retry, or try another model"
		if e.Detail != "" {
			msg = "the model returned no answer (" + e.Detail + "); retry, or try another model"
		}
		return msg
	case ClassThinkOnly:
		return "the model only thought and gave no answer; " + e.lessThinking(name)
	case ClassTruncated:
		if e.Written > 0 && e.Written < e.MaxOutputTokens {
			// A server that lowers max_tokens to the room its context leaves (llama-cpp-python)
			// stops the reply there: more room asked for changes nothing.
			msg := fmt.Sprintf("the answer was cut off at %d output tokens, short of the %d asked (finish_reason length): the model's loaded context ran out; ", e.Written, e.MaxOutputTokens)
			if e.Narrow != "" {
				msg += "narrow the input with " + Words(e.Narrow, name) + ", or "
			}
			return msg + "load the model with a larger context on the server"
		}
		msg := fmt.Sprintf("the answer was cut off at %d output tokens (finish_reason length); raise %s", e.MaxOutputTokens, name("max_output_tokens"))
		if e.Room != "" {
			msg = fmt.Sprintf("the answer was cut off at %d output tokens (finish_reason length), the room %s gives; raise %s for a longer answer (the room grows with it), or set the room yourself with %s",
				e.MaxOutputTokens, Words(e.Room, name), Words(e.Room, name), name("max_output_tokens"))
		}
		if e.Narrow != "" {
			msg += ", or narrow the input with " + Words(e.Narrow, name)
		}
		return msg
	case ClassLostToThinking:
		return fmt.Sprintf("the model spent all %d output tokens thinking and gave no answer; %s", e.MaxOutputTokens, e.lessThinking(name))
	case ClassMalformed:
		return "the server's reply is not a chat completion: " + e.Detail
	}
	return string(e.Class)
}
