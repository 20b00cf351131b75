package client

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// llamaServer is llama.cpp's server (llama-server). It serves one model, under whatever name a
// request gives.
type llamaServer struct{ plain }

func (llamaServer) kind() rails.ServerKind { return rails.LlamaServer }
func (llamaServer) name() string           { return "llama-server" }

// llama-server says so in its Server header, and lists its model as owned by llamacpp.
func (llamaServer) recognise(a firstAnswer) bool {
	return strings.Contains(a.server, "llama.cpp") || a.owned["llamacpp"]
}

// describe reads the loaded context, the build, the slots and the model's file and tool support
// from GET /props.
func (llamaServer) describe(ctx context.Context, c *Client, info *ServerInfo, listed []listedModel) bool {
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
		return false
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
	return true
}

// llama-server ignores reasoning_effort; the chat template's own switch is the one it obeys.
func (llamaServer) thinkingFields(limit rails.ThinkingCap, _ ModelThinking) map[string]any {
	fields := map[string]any{}
	if limit.Off {
		fields["chat_template_kwargs"] = templateNoThinking()
	}
	return fields
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
