package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// estimateBytesPerToken bounds how many bytes one token covers when the server cannot count:
// modern tokenizers average 3 to 4 bytes a token on English and code, so 2.5 overestimates the
// prompt, which errs toward refusing rather than letting a server cut it silently.
const estimateBytesPerToken = 2.5

// toolBytesPerToken is how many bytes of tool definitions one token covers where the server
// cannot render them, measured: llama-server 0c1e570 read the agent's seven tools (2487 bytes as
// sent) as 735 tokens with Qwen2.5's template, 3.38 bytes a token; 3.3 keeps a margin.
const toolBytesPerToken = 3.3

// templateTokens is what a chat template adds around each message (role markers, separators),
// added to a count of the messages' text alone.
const templateTokens = 8

// PromptFit is how a prompt measures against the model's loaded context, for the journal.
type PromptFit struct {
	// Context is the model's loaded context in tokens; 0 when the server does not say, and then
	// nothing is checked.
	Context int64 `json:"context"`
	// Tokens is the prompt's size in tokens, counted by the server or estimated from its bytes.
	Tokens int64  `json:"prompt_tokens"`
	Method string `json:"method"`
	// Counted is true when the server counted the tokens itself.
	Counted bool `json:"counted"`
	// MaxTokens is the reply's room when a default max_tokens was lowered to fit the context; 0
	// when the request asks for what it was given.
	MaxTokens int64 `json:"max_tokens_fitted,omitempty"`
	// text is the server's count of the messages' text alone, without a template's tokens: a
	// server that says it read fewer has cut the prompt.
	text int64
}

func (f *PromptFit) how() string {
	if f.Counted {
		return "counted by the server's " + f.Method
	}
	return fmt.Sprintf("estimated at %.1f bytes a token", estimateBytesPerToken)
}

// ContextError is a prompt that, with room for the reply, does not fit the model's loaded
// context: refused before the request, since a server would cut the prompt from the top, the
// instruction first, and answer anyway.
type ContextError struct {
	Model     string
	Fit       PromptFit
	MaxOutput int64
	// Narrow names the settings that narrow the input, as a template (rails.Words), when the
	// mode has them.
	Narrow string
}

func (e *ContextError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with its settings named by name.
func (e *ContextError) Words(name func(string) string) string {
	return fmt.Sprintf("the prompt (%d tokens, %s) plus %s %d is over the %d-token context %s has loaded; "+
		"the server would cut the prompt. %s",
		e.Fit.Tokens, e.Fit.how(), name("max_output_tokens"), e.MaxOutput, e.Fit.Context, e.Model,
		remedies(rails.Words(e.Narrow, name), "lower "+name("max_output_tokens"), "load the model with a larger context on the server"))
}

// remedies joins what the user can do into a sentence, narrowing the input first where the mode
// has a setting for it.
func remedies(narrow string, rest ...string) string {
	if narrow != "" {
		rest = append([]string{"narrow the input (" + narrow + ")"}, rest...)
	}
	s := strings.Join(rest[:len(rest)-1], ", ")
	if s != "" {
		s += ", or "
	}
	s += rest[len(rest)-1]
	return strings.ToUpper(s[:1]) + s[1:]
}

// InputTruncatedError is a reply to a prompt the server cut to fit its context: it read fewer
// tokens than were sent, or as many as the context holds. What came back answers something
// else, so it is never an answer.
type InputTruncatedError struct {
	Read   int64
	Fit    PromptFit
	Narrow string
}

func (e *InputTruncatedError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with its settings named by name.
func (e *InputTruncatedError) Words(name func(string) string) string {
	return fmt.Sprintf("the server cut the prompt: it read %d tokens against a context of %d (the prompt was %d tokens, %s); "+
		"the reply is not an answer to the task. %s",
		e.Read, e.Fit.Context, e.Fit.Tokens, e.Fit.how(), remedies(rails.Words(e.Narrow, name), "load the model with a larger context on the server"))
}

// ContextOf is the loaded context the server reports for a model, 0 when it does not say.
func (s *ServerInfo) ContextOf(model string) int64 { return dialectOf(s.Kind).contextOf(s, model) }

// listedContext is the context the server lists for model; 0 when it lists none or not the model.
func (s *ServerInfo) listedContext(model string) int64 {
	for _, m := range s.Models {
		if m.ID == model || m.ID == model+":latest" {
			return m.Context
		}
	}
	return 0
}

// fit measures a request's prompt against the model's loaded context: counted by the server
// where it can count (llama-server renders the prompt with its own template, tools included, and
// counts that; vLLM counts the messages with its template), else estimated from the bytes of the
// messages and the tools. thinking is what the request sends to switch thinking, which a template
// may render.
func (c *Client) fit(ctx context.Context, info *ServerInfo, req ChatRequest, thinking map[string]any) (*PromptFit, error) {
	c.mu.Lock()
	f := &PromptFit{Context: info.ContextOf(req.Model)}
	c.mu.Unlock()
	if f.Context > 0 {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if n, text, method, ok := dialectOf(info.Kind).countTokens(cctx, c, req, thinking); ok {
			f.Tokens, f.text, f.Method, f.Counted = n, text, method, true
		}
		cancel()
	}
	if !f.Counted {
		bytes := 0
		for _, m := range req.Messages {
			bytes += len(m.Content)
		}
		f.Tokens = int64(float64(bytes)/estimateBytesPerToken+0.999) + int64(templateTokens*len(req.Messages)) + toolTokens(req.Tools)
		f.Method = "estimate"
	}
	if f.Context > 0 && f.Tokens+req.MaxTokens > f.Context {
		if room := f.Context - f.Tokens; req.FitMaxTokens && room >= MinFittedOutput {
			f.MaxTokens = room
			return f, nil
		}
		return f, &ContextError{Model: req.Model, Fit: *f, MaxOutput: req.MaxTokens, Narrow: req.Narrow}
	}
	return f, nil
}

// MinFittedOutput is the least room a default max_tokens is lowered to: a reply cut shorter
// than this is rarely an answer, so the prompt is refused instead, saying why.
const MinFittedOutput = 256

// toolTokens estimates the tokens of the tools' definitions, from their size as a request sends
// them.
func toolTokens(tools []Tool) int64 {
	if len(tools) == 0 {
		return 0
	}
	data, _ := json.Marshal(wireTools(tools))
	return int64(float64(len(data))/toolBytesPerToken + 0.999)
}

func joinTexts(msgs []Message) string {
	texts := make([]string, len(msgs))
	for i, m := range msgs {
		texts[i] = m.Content
	}
	return strings.Join(texts, "\n")
}

// truncated reports a reply to a prompt the server cut: it read as many tokens as the context
// holds (Ollama keeps the last context-many), or fewer than the text alone holds by its own
// count (llama-server drops a block from the middle). The slack covers tokens merging where the
// messages join.
func truncated(f *PromptFit, u Usage, narrow string) *InputTruncatedError {
	if f == nil || f.Context <= 0 || u.In == nil {
		return nil
	}
	read := *u.In
	if read >= f.Context || read+templateTokens < f.text {
		return &InputTruncatedError{Read: read, Fit: *f, Narrow: narrow}
	}
	return nil
}
