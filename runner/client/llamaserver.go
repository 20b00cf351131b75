package client

import (
	"context"
	"encoding/json"
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

// llama-server reports its prompt processing in a stream (prompt_progress) when asked; a build
// before the field ignores it, as it ignores any field it does not know.
func (llamaServer) promptProgressField() string { return "return_progress" }

// llama-server ignores reasoning_effort; the chat template's own switch is the one it obeys.
func (llamaServer) thinkingFields(limit rails.ThinkingCap, _ ModelThinking) map[string]any {
	fields := map[string]any{}
	if limit.Off {
		fields["chat_template_kwargs"] = templateNoThinking()
	}
	return fields
}

// llama-server serves one model whatever name a request gives, so its one model's context is the
// context of any name.
func (llamaServer) contextOf(info *ServerInfo, model string) int64 {
	if n := info.listedContext(model); n > 0 || len(info.Models) != 1 {
		return n
	}
	return info.Models[0].Context
}

// countTokens counts the prompt as llama-server will render it, with its own template, the tools
// and the default system message the template adds: counted, it is what the server reads.
func (llamaServer) countTokens(ctx context.Context, c *Client, req ChatRequest, thinking map[string]any) (prompt, text int64, method string, ok bool) {
	if n, ok := renderedTokens(ctx, c, req, thinking); ok {
		return n, n, "/apply-template", true
	}
	// A server that cannot render (no --jinja, an older build) counts the text alone; the
	// template's tokens and the tools' are estimated on top.
	n, ok := tokenize(ctx, c, joinTexts(req.Messages), true)
	if !ok {
		return 0, 0, "", false
	}
	return n + int64(templateTokens*len(req.Messages)) + toolTokens(req.Tools), n, "/tokenize", true
}

// renderedTokens renders the request's prompt with llama-server's own chat template
// (POST /apply-template, the body a chat request sends) and counts it (POST /tokenize).
func renderedTokens(ctx context.Context, c *Client, req ChatRequest, thinking map[string]any) (int64, bool) {
	body := map[string]any{"messages": wireMessages(req.Messages)}
	if tools := wireTools(req.Tools); tools != nil {
		body["tools"] = tools
	}
	for k, v := range thinking {
		body[k] = v
	}
	var out struct {
		Prompt *string `json:"prompt"`
	}
	if _, err := c.getJSON(ctx, http.MethodPost, c.rootURL()+"/apply-template", body, &out); err != nil || out.Prompt == nil {
		return 0, false
	}
	// A rendering shorter than the messages' own text is no rendering of them: count another way.
	if len(*out.Prompt) < len(joinTexts(req.Messages))-len(req.Messages) {
		return 0, false
	}
	// The rendered prompt holds the template's special tokens as text: parsed as such, and the
	// model's BOS added as the server adds it to a chat prompt.
	return tokenize(ctx, c, *out.Prompt, true)
}

// tokenize counts text's tokens with llama-server's tokenizer.
func tokenize(ctx context.Context, c *Client, text string, addSpecial bool) (int64, bool) {
	var out struct {
		Tokens []json.RawMessage `json:"tokens"`
	}
	body := map[string]any{"content": text, "add_special": addSpecial, "parse_special": true}
	if _, err := c.getJSON(ctx, http.MethodPost, c.rootURL()+"/tokenize", body, &out); err != nil || out.Tokens == nil {
		return 0, false
	}
	return int64(len(out.Tokens)), true
}

// checkTools reads what GET /props said of the chat template (chat_template_caps.supports_tools).
func (d llamaServer) checkTools(_ context.Context, c *Client, info *ServerInfo, model string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range info.Models {
		if m.Tools != nil && !*m.Tools && (m.ID == model || len(info.Models) == 1) {
			return &ToolsUnsupportedError{Model: model, Server: d.name(), Field: "chat_template_caps.supports_tools is false in GET /props",
				Remedy: "serve a model whose chat template supports tools, with --jinja"}
		}
	}
	return nil
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
