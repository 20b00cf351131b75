package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// ModelWeights returns the server's identity of the weights behind each model it lists with one:
// Ollama's content digest (GET /api/tags), llama-server's file, type, parameters and size, vLLM's
// model root. A server that says nothing, and any failure to ask, gives no entry, since an
// identity is evidence where there is one and never a reason to stop.
func (c *Client) ModelWeights(ctx context.Context) map[string]string {
	out := map[string]string{}
	info, err := c.Probe(ctx)
	if err != nil {
		return out
	}
	if info.Kind != rails.Ollama {
		for _, m := range info.Models {
			if m.Weights != "" {
				out[m.ID] = m.Weights
			}
		}
		return out
	}
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
