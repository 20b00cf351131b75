package client

import (
	"context"
	"net/http"
	"time"

	"github.com/locumdev/locum/rails"
)

// ollama is Ollama (ollama serve), asked beside the OpenAI API through its native /api.
type ollama struct{ plain }

func (ollama) kind() rails.ServerKind { return rails.Ollama }
func (ollama) name() string           { return "Ollama" }

// Ollama lists every model as name:tag, owned by its namespace (library for its own).
func (ollama) recognise(a firstAnswer) bool { return a.owned["library"] || a.tagged }

// Ollama's own port names it where its list does not.
func (ollama) probePort() string { return "11434" }

// describe reads Ollama's version from GET /api/version and the loaded models' contexts from
// GET /api/ps; the version answering as Ollama's does is what tells Ollama from another server.
func (ollama) describe(ctx context.Context, c *Client, info *ServerInfo, _ []listedModel) bool {
	var v struct {
		Version string `json:"version"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/version", nil, &v); err != nil || v.Version == "" {
		return false
	}
	info.Version = v.Version
	if ps, ok := ollamaLoaded(cctx, c); ok {
		for i := range info.Models {
			loaded := false
			for _, p := range ps {
				if p.Name == info.Models[i].ID {
					loaded = true
					info.Models[i].Context = p.ContextLength
				}
			}
			info.Models[i].Loaded = &loaded
		}
	}
	return true
}

// ollamaRunning is one model GET /api/ps lists as loaded, with the context it was loaded with.
type ollamaRunning struct {
	Name          string `json:"name"`
	ContextLength int64  `json:"context_length"`
}

// ollamaLoaded asks Ollama which models are loaded (GET /api/ps); false when it did not say.
func ollamaLoaded(ctx context.Context, c *Client) ([]ollamaRunning, bool) {
	var ps struct {
		Models []ollamaRunning `json:"models"`
	}
	if _, err := c.getJSON(ctx, http.MethodGet, c.rootURL()+"/api/ps", nil, &ps); err != nil {
		return nil, false
	}
	return ps.Models, true
}
