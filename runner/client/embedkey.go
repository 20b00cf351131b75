package client

import (
	"context"
	"net/http"
	"time"

	"github.com/locumdev/locum/rails"
)

// EmbeddingKey names whose vectors a cache holds: two servers can serve different models under
// one name (llama-server answers to any name), and one server can replace a model under its name.
type EmbeddingKey struct {
	Kind     rails.ServerKind
	Endpoint string
	Model    string
	// Digest is the model file's digest where the server reports one (Ollama's tags); "" else.
	Digest string
}

// EmbeddingKey asks the server what it is and, on Ollama, the model's digest. A server that does
// not answer the probe is keyed as unknown: its vectors are still kept apart by endpoint and model.
func (c *Client) EmbeddingKey(ctx context.Context, model string) EmbeddingKey {
	key := EmbeddingKey{Kind: rails.Unknown, Endpoint: c.BaseURL(), Model: model}
	info, err := c.Probe(ctx)
	if err != nil {
		return key
	}
	key.Kind = info.Kind
	if info.Kind == rails.Ollama {
		key.Digest = c.ollamaDigest(ctx, model)
	}
	return key
}

func (c *Client) ollamaDigest(ctx context.Context, model string) string {
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
