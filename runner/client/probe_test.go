package client

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// The first answer names most servers; only the named server's own endpoints are asked after
// it, and a server nothing names gets one request.
func TestProbeAsksOnlyTheServerItFound(t *testing.T) {
	cases := []struct {
		name  string
		mimic string
		list  *scripted.Reply
		kind  rails.ServerKind
		paths []string
	}{
		{"ollama", "ollama", nil, rails.Ollama, []string{"/v1/models", "/api/version", "/api/ps"}},
		{"llama-server", "llama-server", nil, rails.LlamaServer, []string{"/v1/models", "/props"}},
		{"lm studio", "lmstudio", nil, rails.LMStudio, []string{"/v1/models", "/api/v0/models"}},
		{"vllm", "vllm", nil, rails.VLLM, []string{"/v1/models", "/version"}},
		{"unknown", "", ptrReply(runtest.JSON(`{"data":[{"id":"m","owned_by":"me"}]}`)), rails.Unknown, []string{"/v1/models"}},
		{"an empty list names no server", "", ptrReply(runtest.JSON(`{"object":"list","data":[]}`)), rails.Unknown, []string{"/v1/models"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			if tc.mimic != "" {
				require.NoError(t, s.Mimic(tc.mimic))
			}
			if tc.list != nil {
				s.On("GET", "/v1/models", *tc.list)
			}
			info, err := clientFor(t, s).Probe(context.Background())
			require.NoError(t, err)
			assert.Equal(t, tc.kind, info.Kind)
			var paths []string
			for _, r := range s.Requests() {
				paths = append(paths, r.Path)
			}
			assert.Equal(t, tc.paths, paths)
		})
	}
}

func TestProbeSaysWhatAFailureMeans(t *testing.T) {
	t.Run("llama-server loading its model", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		// Constructed from llama.cpp's documented reply while a model loads.
		s.On("GET", "/v1/models", scripted.Reply{Status: 503, Headers: map[string]string{"Server": "llama.cpp"}, Body: `{"error":{"code":503,"message":"Loading model","type":"unavailable_error"}}`})
		_, err := clientFor(t, s).Probe(context.Background())
		var le *LoadingError
		require.True(t, errors.As(err, &le), "got %v", err)
		assert.Equal(t, rails.LlamaServer, le.Kind)
		assert.Equal(t, "llama-server", le.Server)
		assert.Contains(t, err.Error(), "is loading its model (HTTP 503: Loading model); retry shortly")
	})
	t.Run("a base URL without /v1", func(t *testing.T) {
		s := scripted.New()
		defer s.Close()
		require.NoError(t, s.Mimic("ollama"))
		u, err := rails.ParseEndpoint(s.URL, false)
		require.NoError(t, err)
		_, err = New(Config{BaseURL: u}).Probe(context.Background())
		assert.ErrorContains(t, err, "try --base-url "+s.URL+"/v1")
	})
}

func TestStartCommandsByPort(t *testing.T) {
	assert.Equal(t, []string{"ollama serve"}, StartCommands("http://127.0.0.1:11434/v1"))
	assert.Equal(t, []string{"llama-server -m MODEL.gguf"}, StartCommands("http://localhost:8080/v1"))
	assert.Equal(t, []string{"lms server start"}, StartCommands("http://127.0.0.1:1234/v1"))
	assert.Len(t, StartCommands("http://127.0.0.1:5555/v1"), 3)
}

func TestEmbeddingModelByName(t *testing.T) {
	cases := []struct {
		models []string
		want   string
	}{
		{[]string{"qwen2.5-coder:7b", "nomic-embed-text:latest"}, "nomic-embed-text:latest"},
		{[]string{"qwen3-coder-30b", "text-embedding-nomic-embed-text-v1.5"}, "text-embedding-nomic-embed-text-v1.5"},
		{[]string{"all-MiniLM-L6-v2"}, "all-MiniLM-L6-v2"},
		{[]string{"bge-m3:latest", "mxbai-embed-large"}, "bge-m3:latest"},
		{[]string{"tiny:latest", "tiny-bert:latest", "qwen2.5:0.5b"}, ""},
		{nil, ""},
	}
	for _, tc := range cases {
		info := &ServerInfo{}
		for _, id := range tc.models {
			info.Models = append(info.Models, Model{ID: id})
		}
		assert.Equal(t, tc.want, info.EmbeddingModel(), "%v", tc.models)
	}
}
