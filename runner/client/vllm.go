package client

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/locumdev/locum/rails"
)

// vllm is vLLM's OpenAI server (vllm serve).
type vllm struct{ plain }

func (vllm) kind() rails.ServerKind { return rails.VLLM }
func (vllm) name() string           { return "vLLM" }

// vLLM lists its models as owned by itself.
func (vllm) recognise(a firstAnswer) bool { return a.owned["vllm"] }

// describe reads vLLM's version from GET /version; its model list already says each model's
// context (max_model_len) and root.
func (vllm) describe(ctx context.Context, c *Client, info *ServerInfo, _ []listedModel) bool {
	var v struct {
		Version string `json:"version"`
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if _, err := c.getJSON(cctx, http.MethodGet, c.rootURL()+"/version", nil, &v); err != nil {
		return false
	}
	info.Version = v.Version
	return true
}

// vLLM takes OpenAI's reasoning_effort and passes the chat template's own switch on.
func (vllm) thinkingFields(limit rails.ThinkingCap, _ ModelThinking) map[string]any {
	fields := map[string]any{"reasoning_effort": limit.Level}
	if limit.Off {
		fields["chat_template_kwargs"] = templateNoThinking()
	}
	return fields
}

// countTokens asks vLLM's POST /tokenize, which applies the model's chat template itself, so its
// count is the prompt's; the tools' tokens are estimated on top.
func (vllm) countTokens(ctx context.Context, c *Client, req ChatRequest, _ map[string]any) (prompt, text int64, method string, ok bool) {
	var out struct {
		Count *int64 `json:"count"`
	}
	body := map[string]any{"model": req.Model, "messages": req.Messages, "add_generation_prompt": true}
	if _, err := c.getJSON(ctx, http.MethodPost, c.rootURL()+"/tokenize", body, &out); err != nil || out.Count == nil || *out.Count < 0 {
		return 0, 0, "", false
	}
	return *out.Count + toolTokens(req.Tools), 0, "/tokenize", true
}

// vllmRoot is vLLM's model root as an identity: a repository id as it is, a local path by its
// last element only, since the directory names the operator's machine and a record that
// carries it may be committed. The probe reads it from any server's list, whatever its kind.
func vllmRoot(root string) string {
	if strings.HasPrefix(root, "/") || strings.HasPrefix(root, "~") || strings.HasPrefix(root, ".") || strings.Contains(root, `\`) {
		trimmed := strings.TrimRight(root, `/\`)
		return trimmed[strings.LastIndexAny(trimmed, `/\`)+1:]
	}
	return root
}
