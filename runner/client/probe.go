package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	info := &ServerInfo{Kind: unknown.kind()}
	for _, m := range list.Data {
		info.Models = append(info.Models, Model{ID: m.ID, Context: m.MaxModelLen, Weights: vllmRoot(m.Root)})
	}
	// The first answer names most servers; only a server it names, or the one whose port this
	// is, is asked for its details, so an unknown server gets one request.
	if d := recognised(newFirstAnswer(header, list.Data)); d != nil {
		info.Kind = d.kind()
		d.describe(ctx, c, info, list.Data)
		return info, nil
	}
	if port := c.cfg.BaseURL.Port(); port != "" {
		for _, d := range dialects {
			if d.probePort() == port && d.describe(ctx, c, info, list.Data) {
				info.Kind = d.kind()
				break
			}
		}
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
		le := &LoadingError{URL: c.BaseURL(), Message: he.Message}
		// A server loading its model lists none, so only its headers can name it.
		if d := recognised(newFirstAnswer(header, nil)); d != nil {
			le.Kind, le.Server = d.kind(), d.name()
		}
		return le
	case he.Status == http.StatusNotFound && !strings.HasSuffix(strings.TrimSuffix(c.cfg.BaseURL.Path, "/"), "/v1"):
		he.TryBaseURL = strings.TrimSuffix(c.BaseURL(), "/") + "/v1"
	}
	return he
}

// LoadingError is a server that answers but is still loading its model (HTTP 503): not dead, and
// worth a retry shortly.
type LoadingError struct {
	URL string
	// Kind and Server are the server's kind and name when its headers say them; "" else.
	Kind    rails.ServerKind
	Server  string
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
