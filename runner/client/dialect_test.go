package client

import (
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/rails"
)

// Each dialect is a dialect, at compile time.
var (
	_ dialect = lmStudio{}
	_ dialect = ollama{}
	_ dialect = llamaServer{}
	_ dialect = llamaCppPython{}
	_ dialect = vllm{}
	_ dialect = unknownServer{}
)

// serverKinds are the ServerKind constants rails declares, read from its source, so a kind added
// there without a dialect here fails TestEveryKindHasItsDialect.
func serverKinds(t *testing.T) []rails.ServerKind {
	t.Helper()
	dir := filepath.Join("..", "..", "rails")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var kinds []rails.ServerKind
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if typ, ok := vs.Type.(*ast.Ident); !ok || typ.Name != "ServerKind" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					require.True(t, ok, "a ServerKind constant that is not a literal")
					s, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					kinds = append(kinds, rails.ServerKind(s))
				}
			}
		}
	}
	return kinds
}

func TestEveryKindHasItsDialect(t *testing.T) {
	kinds := serverKinds(t)
	require.Len(t, kinds, 6, "rails declares lmstudio, ollama, llama-server, llama-cpp-python, vllm and unknown")
	for _, kind := range kinds {
		d, ok := byKind[kind]
		if assert.True(t, ok, "no dialect for %q", kind) {
			assert.Equal(t, kind, d.kind())
		}
	}
	assert.Len(t, byKind, len(kinds), "a dialect for a kind rails does not declare")
	assert.Len(t, dialects, len(kinds)-1, "every kind but unknown is one a probe can name")
}

func TestDialectOfAKindWithoutOne(t *testing.T) {
	assert.Equal(t, rails.Unknown, dialectOf("").kind())
	assert.Equal(t, rails.Unknown, dialectOf("sglang").kind())
}

func TestServerName(t *testing.T) {
	cases := []struct {
		kind rails.ServerKind
		want string
	}{
		{rails.LMStudio, "LM Studio"},
		{rails.Ollama, "Ollama"},
		{rails.LlamaServer, "llama-server"},
		{rails.LlamaCppPython, "llama-cpp-python"},
		{rails.VLLM, "vLLM"},
		{rails.Unknown, "unknown"},
		{"", "unknown"},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, ServerName(tc.kind), string(tc.kind))
	}
}

func TestFirstAnswerNamesTheServer(t *testing.T) {
	h := func(server string) http.Header { return http.Header{"Server": {server}} }
	listed := func(owner string, ids ...string) []listedModel {
		var out []listedModel
		for _, id := range ids {
			out = append(out, listedModel{ID: id, OwnedBy: owner})
		}
		return out
	}
	cases := []struct {
		name   string
		header http.Header
		listed []listedModel
		want   rails.ServerKind
	}{
		{"vllm", nil, listed("vllm", "Qwen/Qwen3-8B"), rails.VLLM},
		{"llama-server by its header", h("llama.cpp"), listed("", "tiny"), rails.LlamaServer},
		{"llama-server by its owner", nil, listed("llamacpp", "tiny"), rails.LlamaServer},
		{"llama-server loading, its header alone", h("llama.cpp"), nil, rails.LlamaServer},
		{"llama-cpp-python", h("uvicorn"), listed("me", "qwen.gguf"), rails.LlamaCppPython},
		{"owned by me without uvicorn", nil, listed("me", "m"), ""},
		{"lm studio", nil, listed("organization_owner", "qwen3-8b"), rails.LMStudio},
		{"ollama by its namespace", nil, listed("library", "tiny"), rails.Ollama},
		{"ollama by its tags", nil, listed("someone", "tiny:latest", "qwen3:8b"), rails.Ollama},
		// Ollama's sign is the weakest: a name:tag on a server with a surer sign is that server's.
		{"llama-server serving an alias with a tag", h("llama.cpp"), listed("llamacpp", "qwen3:8b"), rails.LlamaServer},
		{"lm studio's second copy of a model", nil, listed("organization_owner", "qwen3-8b:2"), rails.LMStudio},
		{"vllm serving a tagged name", nil, listed("vllm", "qwen3:8b"), rails.VLLM},
		{"one name without a tag", nil, listed("someone", "tiny:latest", "plain"), ""},
		{"an empty list", nil, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got rails.ServerKind
			if d := recognised(newFirstAnswer(tc.header, tc.listed)); d != nil {
				got = d.kind()
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestThinkingFields(t *testing.T) {
	plainModel := ModelThinking{Known: true}
	boolThinker := ModelThinking{Known: true, Thinks: true}
	levels := ModelThinking{Known: true, Thinks: true, Levels: true}
	noKwargs := map[string]any{"enable_thinking": false}
	cases := []struct {
		name   string
		kind   rails.ServerKind
		effort string
		model  ModelThinking
		want   map[string]any
	}{
		{"ollama plain model gets nothing", rails.Ollama, "low", plainModel, map[string]any{}},
		{"ollama unknown model at low gets none", rails.Ollama, "low", ModelThinking{}, map[string]any{"reasoning_effort": "none"}},
		{"ollama unknown model at none gets none", rails.Ollama, "none", ModelThinking{}, map[string]any{"reasoning_effort": "none"}},
		{"ollama unknown model at medium gets nothing", rails.Ollama, "medium", ModelThinking{}, map[string]any{}},
		{"ollama boolean thinker low", rails.Ollama, "low", boolThinker, map[string]any{"reasoning_effort": "none"}},
		{"ollama boolean thinker none", rails.Ollama, "none", boolThinker, map[string]any{"reasoning_effort": "none"}},
		{"ollama boolean thinker high", rails.Ollama, "high", boolThinker, map[string]any{}},
		{"ollama levels low", rails.Ollama, "low", levels, map[string]any{"reasoning_effort": "low"}},
		{"ollama levels none", rails.Ollama, "none", levels, map[string]any{"reasoning_effort": "low"}},
		{"llama-server low", rails.LlamaServer, "low", ModelThinking{}, map[string]any{"chat_template_kwargs": noKwargs}},
		{"llama-server medium", rails.LlamaServer, "medium", ModelThinking{}, map[string]any{}},
		{"lm studio low", rails.LMStudio, "low", ModelThinking{}, map[string]any{"reasoning_effort": "low", "enable_thinking": false}},
		{"lm studio high", rails.LMStudio, "high", ModelThinking{}, map[string]any{"reasoning_effort": "high"}},
		{"vllm none", rails.VLLM, "none", ModelThinking{}, map[string]any{"reasoning_effort": "low", "chat_template_kwargs": noKwargs}},
		{"vllm medium", rails.VLLM, "medium", ModelThinking{}, map[string]any{"reasoning_effort": "medium"}},
		{"llama-cpp-python low gets nothing", rails.LlamaCppPython, "low", ModelThinking{}, map[string]any{}},
		{"unknown low", rails.Unknown, "low", ModelThinking{}, map[string]any{"reasoning_effort": "low", "chat_template_kwargs": noKwargs}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, dialectOf(tc.kind).thinkingFields(rails.CapThinking(tc.effort), tc.model))
		})
	}
}
