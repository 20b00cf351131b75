package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// lmStudio is LM Studio's server (lms server start).
type lmStudio struct{ plain }

func (lmStudio) kind() rails.ServerKind { return rails.LMStudio }
func (lmStudio) name() string           { return "LM Studio" }

// LM Studio lists its models as owned by organization_owner.
func (lmStudio) recognise(a firstAnswer) bool { return a.owned["organization_owner"] }

// LM Studio's own port names it where its list does not.
func (lmStudio) probePort() string { return "1234" }

// LM Studio takes OpenAI's reasoning_effort, and a top-level enable_thinking of its own.
func (lmStudio) thinkingFields(limit rails.ThinkingCap, _ ModelThinking) map[string]any {
	fields := map[string]any{"reasoning_effort": limit.Level}
	if limit.Off {
		fields["enable_thinking"] = false
	}
	return fields
}

// describe reads LM Studio's REST API (GET /api/v0/models), which says which models are loaded
// and with what context, which are embedding models, and what each one's file is.
func (lmStudio) describe(ctx context.Context, c *Client, info *ServerInfo, _ []listedModel) bool {
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
