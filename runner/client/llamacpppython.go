package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// llamaCppPython is llama-cpp-python's server (python -m llama_cpp.server).
type llamaCppPython struct{ plain }

func (llamaCppPython) kind() rails.ServerKind { return rails.LlamaCppPython }
func (llamaCppPython) name() string           { return "llama-cpp-python" }

// llama-cpp-python lists its models as owned by "me", behind uvicorn.
func (llamaCppPython) recognise(a firstAnswer) bool {
	return a.owned["me"] && strings.Contains(a.server, "uvicorn")
}

// llama-cpp-python accepts both switches and obeys neither (its chat handler passes no template
// arguments): sending one would only pretend to a cap. max_tokens still bounds thinking.
func (llamaCppPython) thinkingFields(rails.ThinkingCap, ModelThinking) map[string]any {
	return map[string]any{}
}

// llama-cpp-python streams no usage and answers a prompt over its context with an empty stream;
// unstreamed it reports both.
func (llamaCppPython) streamsUsage() bool { return false }

// describe reads llama-cpp-python's version from its OpenAPI description, the only place it says
// it. It serves no context window (no /props, nothing in /v1/models): the window is learned from
// its refusal of a prompt over it.
func (llamaCppPython) describe(ctx context.Context, c *Client, info *ServerInfo, _ []listedModel) bool {
	var api struct {
		Info struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/openapi.json", nil, &api); err != nil || !strings.Contains(api.Info.Title, "llama.cpp Python") {
		return false
	}
	info.Version = api.Info.Version
	return true
}
