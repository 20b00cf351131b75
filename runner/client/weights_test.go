package client

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
)

// Ollama reports each model's digest in /api/tags, by name and by the bare name of :latest; the
// other servers report none, and a failure to ask is no digest rather than an error.
func TestModelDigests(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("ollama"))
	srv.On("GET", "/api/tags", scripted.Reply{JSON: json.RawMessage(`{"models":[{"name":"tiny:latest","digest":"a1b2"},{"name":"coder:30b","digest":"c3d4"},{"name":"nodigest:1"}]}`)})
	got := clientFor(t, srv).ModelDigests(context.Background())
	assert.Equal(t, map[string]string{"tiny:latest": "a1b2", "tiny": "a1b2", "coder:30b": "c3d4"}, got)

	lm := scripted.New()
	defer lm.Close()
	require.NoError(t, lm.Mimic("lmstudio"))
	assert.Empty(t, clientFor(t, lm).ModelDigests(context.Background()))

	broken := scripted.New()
	defer broken.Close()
	require.NoError(t, broken.Mimic("ollama"))
	broken.On("GET", "/api/tags", scripted.Reply{Status: 500, Body: "no"})
	assert.Empty(t, clientFor(t, broken).ModelDigests(context.Background()))
}
