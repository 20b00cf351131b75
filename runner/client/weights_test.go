package client

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
)

// Ollama reports each model's digest in /api/tags, by name and by the bare name of :latest; LM
// Studio reports nothing, and a failure to ask is no identity rather than an error.
func TestModelWeights(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("ollama"))
	srv.On("GET", "/api/tags", scripted.Reply{JSON: json.RawMessage(`{"models":[{"name":"tiny:latest","digest":"a1b2"},{"name":"coder:30b","digest":"c3d4"},{"name":"nodigest:1"}]}`)})
	got := clientFor(t, srv).ModelWeights(context.Background())
	assert.Equal(t, map[string]string{"tiny:latest": "a1b2", "tiny": "a1b2", "coder:30b": "c3d4"}, got)

	lm := scripted.New()
	defer lm.Close()
	require.NoError(t, lm.Mimic("lmstudio"))
	assert.Empty(t, clientFor(t, lm).ModelWeights(context.Background()))

	broken := scripted.New()
	defer broken.Close()
	require.NoError(t, broken.Mimic("ollama"))
	broken.On("GET", "/api/tags", scripted.Reply{Status: 500, Body: "no"})
	assert.Empty(t, clientFor(t, broken).ModelWeights(context.Background()))
}

// llama-server describes its one model in /props (the file) and the list's meta (type,
// parameters, size): the identity is those, as the real server sent them, without the file's
// directory. A server that lists several models under one /props identifies none of them.
func TestModelWeightsFromLlamaServer(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	srv.On("GET", "/v1/models", scripted.MustFixture("llama-server-0c1e570-qwen/models"))
	srv.On("GET", "/props", scripted.MustFixture("llama-server-0c1e570-qwen/props"))
	got := clientFor(t, srv).ModelWeights(context.Background())
	assert.Equal(t, map[string]string{"qwen2.5-coder-1.5b-instruct": "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf, Q4_K - Medium, 1777088000 parameters, 1111370240 bytes"}, got)

	tests := []struct {
		name, models, props string
		want                map[string]string
	}{
		{"a Windows path", `{"data":[{"id":"m","owned_by":"llamacpp"}]}`, `{"model_path":"C:\\models\\m.gguf"}`, map[string]string{"m": "m.gguf"}},
		{"no model_path, meta only", `{"data":[{"id":"m","owned_by":"llamacpp","meta":{"n_params":7,"size":9}}]}`, `{}`, map[string]string{"m": "7 parameters, 9 bytes"}},
		{"nothing said", `{"data":[{"id":"m","owned_by":"llamacpp"}]}`, `{}`, map[string]string{}},
		{"two models under one /props", `{"data":[{"id":"a","owned_by":"llamacpp"},{"id":"b","owned_by":"llamacpp"}]}`, `{"model_path":"/m/a.gguf"}`, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := scripted.New()
			defer srv.Close()
			srv.On("GET", "/v1/models", scripted.Reply{JSON: json.RawMessage(tt.models)})
			srv.On("GET", "/props", scripted.Reply{JSON: json.RawMessage(tt.props)})
			assert.Equal(t, tt.want, clientFor(t, srv).ModelWeights(context.Background()))
		})
	}
}

// vLLM names the path or repository each served model was loaded from as its root; a local
// path keeps only its last element, since its directory names the operator's machine.
func TestModelWeightsFromVLLM(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	srv.On("GET", "/v1/models", scripted.Reply{JSON: json.RawMessage(`{"data":[
		{"id":"coder","owned_by":"vllm","root":"Qwen/Qwen2.5-Coder-7B-Instruct","max_model_len":32768},
		{"id":"local","owned_by":"vllm","root":"/home/alice/models/Qwen2.5-7B/"},
		{"id":"win","owned_by":"vllm","root":"C:\\models\\q7"}]}`)})
	srv.On("GET", "/version", scripted.Reply{JSON: json.RawMessage(`{"version":"0.11.0"}`)})
	assert.Equal(t, map[string]string{"coder": "Qwen/Qwen2.5-Coder-7B-Instruct", "local": "Qwen2.5-7B", "win": "q7"}, clientFor(t, srv).ModelWeights(context.Background()))
}

// LM Studio describes each model in /api/v0/models: its publisher and key, arch, quantization and
// format, and whether it is an embedding model, which is what picks one.
func TestModelWeightsFromLMStudio(t *testing.T) {
	srv := scripted.New()
	defer srv.Close()
	require.NoError(t, srv.Mimic("lmstudio"))
	srv.On("GET", "/v1/models", scripted.Reply{JSON: json.RawMessage(`{"data":[{"id":"qwen3-coder-30b","owned_by":"organization_owner"},{"id":"my-vectors","owned_by":"organization_owner"},{"id":"text-embed-lookalike","owned_by":"organization_owner"}]}`)})
	srv.On("GET", "/api/v0/models", scripted.Reply{JSON: json.RawMessage(`{"data":[
		{"id":"qwen3-coder-30b","type":"llm","publisher":"qwen","arch":"qwen3moe","quantization":"Q4_K_M","compatibility_type":"gguf","state":"loaded","loaded_context_length":32768},
		{"id":"my-vectors","type":"embeddings","state":"not-loaded"},
		{"id":"text-embed-lookalike","type":"llm","state":"not-loaded"}]}`)})
	c := clientFor(t, srv)
	assert.Equal(t, map[string]string{"qwen3-coder-30b": "qwen/qwen3-coder-30b, qwen3moe, Q4_K_M, gguf"}, c.ModelWeights(context.Background()))
	info, err := c.Probe(context.Background())
	require.NoError(t, err)
	assert.Equal(t, "my-vectors", info.EmbeddingModel(), "the server's word, not the name, picks the embedding model")
}
