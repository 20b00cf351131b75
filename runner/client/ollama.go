package client

import (
	"context"
	"net/http"
	"strings"
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

// Ollama answers HTTP 400 to reasoning_effort on a model without thinking, and to "low" on a model
// that only thinks on or off, so the model's capabilities decide what it is sent.
func (ollama) thinkingFields(limit rails.ThinkingCap, m ModelThinking) map[string]any {
	fields := map[string]any{}
	switch {
	case !m.Known:
		// A model we could not ask about: "none" is the one value every Ollama accepts for any
		// model (a plain one included), so the cap still holds at none and low.
		if limit.Off {
			fields["reasoning_effort"] = "none"
		}
	case !m.Thinks:
		// A plain model: any other value would be a 400.
	case m.Levels:
		fields["reasoning_effort"] = limit.Level
	case limit.Off:
		fields["reasoning_effort"] = "none"
	}
	return fields
}

// modelThinking asks Ollama's POST /api/show whether the model thinks and how.
func (ollama) modelThinking(ctx context.Context, c *Client, model string) (ModelThinking, error) {
	m := ollamaShow(ctx, c, model)
	return m.ModelThinking, m.err
}

// ollamaShow asks Ollama's POST /api/show, once per model and run, what the model can do.
func ollamaShow(ctx context.Context, c *Client, model string) shownModel {
	c.mu.Lock()
	m, ok := c.shown[model]
	c.mu.Unlock()
	if ok {
		return m
	}
	var show struct {
		Capabilities []string `json:"capabilities"`
		Details      struct {
			Family string `json:"family"`
		} `json:"details"`
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := c.getJSON(ctx, http.MethodPost, c.rootURL()+"/api/show", map[string]string{"model": model}, &show)
	if err == nil {
		m.Known = true
		m.capabilities = show.Capabilities
		for _, capability := range show.Capabilities {
			switch capability {
			case "thinking":
				m.Thinks = true
			case "tools":
				m.tools = true
			}
		}
		fam := strings.ToLower(show.Details.Family + " " + model)
		m.Levels = m.Thinks && (strings.Contains(fam, "gptoss") || strings.Contains(fam, "gpt-oss"))
	}
	m.err = err
	c.mu.Lock()
	c.shown[model] = m
	c.mu.Unlock()
	return m
}

// shownModel is what Ollama said of a model's capabilities, with the error when the asking failed.
type shownModel struct {
	ModelThinking
	tools        bool
	capabilities []string
	err          error
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
