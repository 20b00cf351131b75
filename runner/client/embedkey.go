package client

import (
	"context"

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
	key := EmbeddingKey{Kind: unknown.kind(), Endpoint: c.BaseURL(), Model: model}
	info, err := c.Probe(ctx)
	if err != nil {
		return key
	}
	key.Kind = info.Kind
	key.Digest = dialectOf(info.Kind).digest(ctx, c, model)
	return key
}
