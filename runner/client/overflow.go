package client

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"

	"github.com/locumdev/locum/rails"
)

// ServerContextError is a prompt the server itself refused as over the model's context (HTTP
// 400): a server that does not say its context before a request says it here. Nothing was
// generated.
type ServerContextError struct {
	Server  string
	Model   string
	Context int64
	// Prompt is the prompt's size in tokens as the server counted it; 0 when it did not say.
	Prompt int64
	// Narrow names the settings that narrow the input, as a template (rails.Words); "" for none.
	Narrow string
}

func (e *ServerContextError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with its settings named by name.
func (e *ServerContextError) Words(name func(string) string) string {
	prompt := "the prompt"
	if e.Prompt > 0 {
		prompt = fmt.Sprintf("the prompt (%d tokens, counted by the server)", e.Prompt)
	}
	return fmt.Sprintf("%s refused %s as over the %d-token context %s has loaded; %s", e.Server, prompt, e.Context, e.Model,
		remedies(rails.Words(e.Narrow, name), "load the model with a larger context on the server"))
}

// contextLimit reads OpenAI's wording of a context refusal, which llama-cpp-python and vLLM
// both use: "This model's maximum context length is 1024 tokens. However, you requested 5988
// tokens (5924 in the messages, 64 in the completion)."
var (
	contextLimit  = regexp.MustCompile(`maximum context length is ([0-9]{1,9}) tokens`)
	contextPrompt = regexp.MustCompile(`\(([0-9]{1,9}) in the messages`)
)

// contextExceeded reads a server's refusal of a prompt over its context, and keeps the context
// it names, so a later request of the same client is measured against it before it is sent;
// nil when err is not one.
func (c *Client) contextExceeded(info *ServerInfo, req ChatRequest, err error) error {
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusBadRequest {
		return nil
	}
	m := contextLimit.FindStringSubmatch(he.Message)
	if m == nil {
		return nil
	}
	window, _ := strconv.ParseInt(m[1], 10, 64)
	if window <= 0 {
		return nil
	}
	out := &ServerContextError{Server: dialectOf(info.Kind).name(), Model: req.Model, Context: window, Narrow: req.Narrow}
	if out.Server == "" {
		out.Server = "the server"
	}
	if p := contextPrompt.FindStringSubmatch(he.Message); p != nil {
		out.Prompt, _ = strconv.ParseInt(p[1], 10, 64)
	}
	c.mu.Lock()
	for i := range info.Models {
		if info.Models[i].ID == req.Model && info.Models[i].Context == 0 {
			info.Models[i].Context = window
		}
	}
	c.mu.Unlock()
	return out
}
