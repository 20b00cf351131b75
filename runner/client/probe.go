package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// Model is one model a server lists.
type Model struct {
	ID string `json:"id"`
	// Context is the context window the server reports for the loaded model; 0 when it does not say.
	Context int64 `json:"context,omitempty"`
	Loaded  *bool `json:"loaded,omitempty"`
	// Weights is the server's own description of the weights it serves under this name, where it
	// gives one: llama-server's file name, type, parameter count and size (/props and the list's
	// meta), LM Studio's publisher and model key with its arch, quantization and format
	// (/api/v0/models), vLLM's model root. Ollama's content digest comes from ModelWeights. "" when the
	// server says nothing that tells one set of weights from another.
	Weights string `json:"weights,omitempty"`
	// Embedding says whether the server calls the model an embedding model (LM Studio's type);
	// nil where it does not say.
	Embedding *bool `json:"embedding,omitempty"`
	// Tools says whether the model's chat template renders tool definitions, by the server's
	// word (llama-server's chat_template_caps.supports_tools); nil where it does not say.
	Tools *bool `json:"tools,omitempty"`
}

// ServerInfo is what a probe learned about the server.
type ServerInfo struct {
	Kind    rails.ServerKind `json:"kind"`
	Version string           `json:"version,omitempty"`
	Models  []Model          `json:"models"`
	// Slots is how many requests the server decodes at once, by its own word (llama-server's
	// total_slots); 0 where it does not say.
	Slots int `json:"slots,omitempty"`
}

// Has reports whether the server lists the model. llama-server answers any model name, so only a
// listed model counts as present. Ollama lists name:tag and accepts the bare name for :latest.
func (s *ServerInfo) Has(model string) bool {
	for _, m := range s.Models {
		if m.ID == model || m.ID == model+":latest" {
			return true
		}
	}
	return false
}

// embeddingNameParts are the words in a model's name that mark it as an embedding model where the
// server says nothing of its kind: nomic-embed-text, mxbai-embed-large, text-embedding-3-small,
// all-MiniLM-L6-v2, bge-m3, snowflake-arctic-embed, gte-small, e5-large.
var embeddingNameParts = []string{"embed", "minilm", "bge-", "bge:", "gte-", "e5-"}

// EmbeddingModel is the first model, in the server's order, that the server calls an embedding
// model; where the server says nothing of its models' kinds, the first whose name marks it as
// one; "" when none is. Both status and dedup pick by it, so they name the same model, and only
// ever one the server lists.
func (s *ServerInfo) EmbeddingModel() string {
	for _, m := range s.Models {
		if s.IsEmbedding(m) {
			return m.ID
		}
	}
	return ""
}

// IsEmbedding says whether m is an embedding model: by the server's word where it gives one for
// any of its models, else by the name.
func (s *ServerInfo) IsEmbedding(m Model) bool {
	for _, o := range s.Models {
		if o.Embedding != nil {
			return m.Embedding != nil && *m.Embedding
		}
	}
	id := strings.ToLower(m.ID)
	for _, part := range embeddingNameParts {
		if strings.Contains(id, part) {
			return true
		}
	}
	return false
}

// PickedEmbedSource is the source a picked embedding model is reported with.
const PickedEmbedSource = "picked by name from the models the server lists"

// Probe asks the server what it is and what it serves, once per client; later calls return the
// first answer. Each request of the probe has a short deadline of its own.
func (c *Client) Probe(ctx context.Context) (*ServerInfo, error) {
	c.mu.Lock()
	cached := c.server
	c.mu.Unlock()
	if cached != nil {
		return cached, nil
	}
	info, err := c.probe(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.server = info
	c.mu.Unlock()
	return info, nil
}

type listedModel struct {
	ID          string `json:"id"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int64  `json:"max_model_len"`
	// Root is vLLM's: the path or repository the served model was loaded from.
	Root string `json:"root"`
	// Meta is llama-server's: what the loaded GGUF holds.
	Meta *struct {
		NParams int64  `json:"n_params"`
		Size    int64  `json:"size"`
		Ftype   string `json:"ftype"`
	} `json:"meta"`
}

// vllmRoot is vLLM's model root as an identity: a repository id as it is, a local path by its
// last element only, since the directory names the operator's machine and a record that
// carries it may be committed.
func vllmRoot(root string) string {
	if strings.HasPrefix(root, "/") || strings.HasPrefix(root, "~") || strings.HasPrefix(root, ".") || strings.Contains(root, `\`) {
		trimmed := strings.TrimRight(root, `/\`)
		return trimmed[strings.LastIndexAny(trimmed, `/\`)+1:]
	}
	return root
}

// llamaServerWeights describes a GGUF as llama-server reports it: "FILE, TYPE, N parameters,
// N bytes", each part only where the server gave it. The file's directory is left out: it names
// the operator's home, and a record that carries it may be committed.
func (m listedModel) llamaServerWeights(modelPath string) string {
	var parts []string
	// A Windows server's path may use either separator.
	if name := modelPath[strings.LastIndexAny(modelPath, `/\`)+1:]; name != "" {
		parts = append(parts, name)
	}
	if m.Meta != nil {
		if m.Meta.Ftype != "" {
			parts = append(parts, m.Meta.Ftype)
		}
		if m.Meta.NParams > 0 {
			parts = append(parts, strconv.FormatInt(m.Meta.NParams, 10)+" parameters")
		}
		if m.Meta.Size > 0 {
			parts = append(parts, strconv.FormatInt(m.Meta.Size, 10)+" bytes")
		}
	}
	return strings.Join(parts, ", ")
}

// The probe asks for the model list under a limit of its own: a server that cannot list its
// models in this time will not serve a completion either, and the user should hear so at once.
const (
	probeTimeout = 3 * time.Second
	probeLimit   = "the probe's own limit for GET /models"
)

func (c *Client) probe(ctx context.Context) (*ServerInfo, error) {
	var list struct {
		Data []listedModel `json:"data"`
	}
	cctx, cancel := context.WithTimeout(ctx, probeTimeout)
	header, err := c.getJSON(cctx, http.MethodGet, c.cfg.BaseURL.String()+"/models", nil, &list)
	stalled := cctx.Err() != nil && ctx.Err() == nil
	cancel()
	if err != nil {
		if te := (*TimeoutError)(nil); errors.As(err, &te) && stalled {
			return nil, &TimeoutError{What: probeLimit, After: probeTimeout}
		}
		return nil, c.probeError(err, header)
	}
	info := &ServerInfo{Kind: rails.Unknown}
	owned := map[string]bool{}
	tagged := len(list.Data) > 0
	for _, m := range list.Data {
		info.Models = append(info.Models, Model{ID: m.ID, Context: m.MaxModelLen, Weights: vllmRoot(m.Root)})
		owned[m.OwnedBy] = true
		tagged = tagged && strings.Contains(m.ID, ":")
	}
	// The first answer names most servers; only a server it names, or the one whose port this
	// is, is asked for its details, so an unknown server gets one request.
	switch port := c.cfg.BaseURL.Port(); {
	case owned["vllm"]:
		info.Kind = rails.VLLM
		c.vllmVersion(ctx, info)
	case strings.Contains(strings.ToLower(header.Get("Server")), "llama.cpp") || owned["llamacpp"]:
		info.Kind = rails.LlamaServer
		c.llamaServerContext(ctx, info, list.Data)
	case owned["me"] && strings.Contains(strings.ToLower(header.Get("Server")), "uvicorn"):
		// llama-cpp-python's server lists its models as owned by "me", behind uvicorn.
		info.Kind = rails.LlamaCppPython
		c.llamaCppPythonVersion(ctx, info)
	case owned["organization_owner"]:
		info.Kind = rails.LMStudio
		c.lmStudioDetails(ctx, info)
	case owned["library"] || tagged:
		// Ollama lists every model as name:tag, owned by its namespace (library for its own).
		info.Kind = rails.Ollama
		c.ollamaDetails(ctx, info)
	case port == "11434" && c.ollamaDetails(ctx, info):
		info.Kind = rails.Ollama
	case port == "1234" && c.lmStudioDetails(ctx, info):
		info.Kind = rails.LMStudio
	}
	return info, nil
}

// probeError says what a failed first request means: a server still loading its model, or a
// base URL that lacks /v1.
func (c *Client) probeError(err error, header http.Header) error {
	var he *HTTPError
	if !errors.As(err, &he) {
		return err
	}
	switch {
	case he.Status == http.StatusServiceUnavailable:
		name := ""
		if strings.Contains(strings.ToLower(header.Get("Server")), "llama.cpp") {
			name = rails.LlamaServer.Display()
		}
		return &LoadingError{URL: c.BaseURL(), Server: name, Message: he.Message}
	case he.Status == http.StatusNotFound && !strings.HasSuffix(strings.TrimSuffix(c.cfg.BaseURL.Path, "/"), "/v1"):
		he.TryBaseURL = strings.TrimSuffix(c.BaseURL(), "/") + "/v1"
	}
	return he
}

// LoadingError is a server that answers but is still loading its model (HTTP 503): not dead, and
// worth a retry shortly.
type LoadingError struct {
	URL     string
	Server  string // the server's name, when its headers say it
	Message string
}

func (e *LoadingError) Error() string {
	who := "the server"
	if e.Server != "" {
		who = e.Server
	}
	msg := fmt.Sprintf("%s at %s is loading its model (HTTP 503", who, e.URL)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	return msg + "); retry shortly"
}

func (c *Client) vllmVersion(ctx context.Context, info *ServerInfo) {
	var v struct {
		Version string `json:"version"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/version", nil, &v); err == nil {
		info.Version = v.Version
	}
}

// llamaServerContext reads the loaded context and the model's file from /props; llama-server
// serves one model.
func (c *Client) llamaServerContext(ctx context.Context, info *ServerInfo, listed []listedModel) {
	var props struct {
		Settings struct {
			NCtx int64 `json:"n_ctx"`
		} `json:"default_generation_settings"`
		Build      string `json:"build_info"`
		ModelPath  string `json:"model_path"`
		TotalSlots int    `json:"total_slots"`
		Caps       struct {
			SupportsTools *bool `json:"supports_tools"`
		} `json:"chat_template_caps"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/props", nil, &props); err != nil {
		return
	}
	info.Version = props.Build
	if props.TotalSlots > 0 && props.TotalSlots <= 1024 {
		info.Slots = props.TotalSlots
	}
	for i := range info.Models {
		if props.Settings.NCtx > 0 {
			info.Models[i].Context = props.Settings.NCtx
		}
		if len(info.Models) == 1 {
			info.Models[i].Weights = listed[i].llamaServerWeights(props.ModelPath)
			info.Models[i].Tools = props.Caps.SupportsTools
		}
	}
}

// ollamaDetails reads Ollama's version from /api/version and the loaded models' contexts from
// /api/ps; it reports whether /api/version answered as Ollama does.
func (c *Client) ollamaDetails(ctx context.Context, info *ServerInfo) bool {
	var v struct {
		Version string `json:"version"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/version", nil, &v); err != nil || v.Version == "" {
		return false
	}
	info.Version = v.Version
	var ps struct {
		Models []struct {
			Name          string `json:"name"`
			ContextLength int64  `json:"context_length"`
		} `json:"models"`
	}
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/ps", nil, &ps); err == nil {
		for i := range info.Models {
			loaded := false
			for _, p := range ps.Models {
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

// lmStudioDetails recognises LM Studio by its REST API, which says which models are loaded and
// with what context.
func (c *Client) lmStudioDetails(ctx context.Context, info *ServerInfo) bool {
	var list struct {
		Data []struct {
			ID                  string `json:"id"`
			Type                string `json:"type"`
			Publisher           string `json:"publisher"`
			Arch                string `json:"arch"`
			Quantization        string `json:"quantization"`
			Format              string `json:"compatibility_type"`
			State               string `json:"state"`
			LoadedContextLength int64  `json:"loaded_context_length"`
			MaxContextLength    int64  `json:"max_context_length"`
		} `json:"data"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/api/v0/models", nil, &list); err != nil || len(list.Data) == 0 || list.Data[0].State == "" {
		return false
	}
	for i := range info.Models {
		for _, m := range list.Data {
			if m.ID != info.Models[i].ID {
				continue
			}
			loaded := m.State == "loaded"
			info.Models[i].Loaded = &loaded
			if loaded {
				info.Models[i].Context = m.LoadedContextLength
			}
			if m.Type != "" {
				embedding := m.Type == "embeddings"
				info.Models[i].Embedding = &embedding
			}
			// LM Studio's model key with what it says of the file: "publisher/key, arch,
			// quantization, format", each part only where it gave it.
			var parts []string
			if m.Publisher != "" {
				parts = append(parts, m.Publisher+"/"+m.ID)
			}
			for _, p := range []string{m.Arch, m.Quantization, m.Format} {
				if p != "" {
					parts = append(parts, p)
				}
			}
			info.Models[i].Weights = strings.Join(parts, ", ")
		}
	}
	return true
}

// llamaCppPythonVersion reads llama-cpp-python's version from its OpenAPI description, the only
// place it says it. It serves no context window (no /props, nothing in /v1/models): the window
// is learned from its refusal of a prompt over it.
func (c *Client) llamaCppPythonVersion(ctx context.Context, info *ServerInfo) {
	var api struct {
		Info struct {
			Title   string `json:"title"`
			Version string `json:"version"`
		} `json:"info"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/openapi.json", nil, &api); err == nil && strings.Contains(api.Info.Title, "llama.cpp Python") {
		info.Version = api.Info.Version
	}
}
