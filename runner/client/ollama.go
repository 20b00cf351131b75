package client

import (
	"context"
	"fmt"
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

// loadedContext asks GET /api/ps again once a request has loaded the model: a model that was not
// loaded when the server was probed has no context to check against until then. The answer is
// kept for the run's later requests.
func (ollama) loadedContext(ctx context.Context, c *Client, info *ServerInfo, model string) int64 {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ps, ok := ollamaLoaded(ctx, c)
	if !ok {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range ps {
		for i := range info.Models {
			if m := &info.Models[i]; p.Name == m.ID && (m.ID == model || m.ID == model+":latest") && p.ContextLength > 0 {
				loaded := true
				m.Context, m.Loaded = p.ContextLength, &loaded
				return p.ContextLength
			}
		}
	}
	return 0
}

// checkTools reads the model's capabilities from POST /api/show. An Ollama older than 0.6.4 lists
// no capabilities at all: that says nothing of tools.
func (d ollama) checkTools(ctx context.Context, c *Client, _ *ServerInfo, model string) error {
	if m := ollamaShow(ctx, c, model); m.err == nil && len(m.capabilities) > 0 && !m.tools {
		return &ToolsUnsupportedError{Model: model, Server: d.name(),
			Field:  fmt.Sprintf("the capabilities of POST /api/show are [%s], without \"tools\"", strings.Join(m.capabilities, ", ")),
			Remedy: "pull a model whose capabilities list tools (ollama show MODEL lists them)"}
	}
	return nil
}

// weights are Ollama's content digests (GET /api/tags), its identity of a model's weights.
func (ollama) weights(ctx context.Context, c *Client, _ *ServerInfo) map[string]string {
	out := map[string]string{}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var tags struct {
		Models []struct {
			Name   string `json:"name"`
			Digest string `json:"digest"`
		} `json:"models"`
	}
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/tags", nil, &tags); err != nil {
		return out
	}
	for _, m := range tags.Models {
		if m.Name == "" || m.Digest == "" {
			continue
		}
		out[m.Name] = m.Digest
		// Ollama accepts the bare name for :latest, so a model named either way finds its digest.
		if bare, ok := strings.CutSuffix(m.Name, ":latest"); ok {
			out[bare] = m.Digest
		}
	}
	return out
}

// digest is the model's content digest from GET /api/tags.
func (ollama) digest(ctx context.Context, c *Client, model string) string {
	var tags struct {
		Models []struct {
			Name   string `json:"name"`
			Model  string `json:"model"`
			Digest string `json:"digest"`
		} `json:"models"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/tags", nil, &tags); err != nil {
		return ""
	}
	for _, m := range tags.Models {
		for _, name := range []string{m.Name, m.Model} {
			if name == model || name == model+":latest" {
				return m.Digest
			}
		}
	}
	return ""
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
