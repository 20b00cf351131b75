package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// ModelDigests returns the content digest of each model the server lists with one. Only Ollama
// reports digests (GET /api/tags); every other server, and any failure to ask, gives an empty map,
// since a digest is evidence where there is one and never a reason to stop.
func (c *Client) ModelDigests(ctx context.Context) map[string]string {
	out := map[string]string{}
	info, err := c.Probe(ctx)
	if err != nil || info.Kind != rails.Ollama {
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
