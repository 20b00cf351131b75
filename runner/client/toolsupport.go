package client

import (
	"context"
	"fmt"
	"strings"

	"github.com/locumdev/locum/rails"
)

// ToolsUnsupportedError is a request that offers tools to a model whose chat template, by the
// server's own word, does not render them: the server would drop the definitions silently, and
// the model, never told of a tool, could only answer in prose.
type ToolsUnsupportedError struct {
	Model  string
	Server string
	// Field is where the server says so, in its own terms.
	Field string
	// Remedy is what to do on this server.
	Remedy string
}

func (e *ToolsUnsupportedError) Error() string {
	return fmt.Sprintf("%s says the chat template of %s does not render tools (%s), so the model would never see them; %s",
		e.Server, e.Model, e.Field, e.Remedy)
}

// checkTools refuses, before any request, to offer tools to a model the server says cannot take
// them: llama-server's GET /props (chat_template_caps.supports_tools) and Ollama's POST
// /api/show (capabilities) say so; elsewhere nothing is checked.
func (c *Client) checkTools(ctx context.Context, info *ServerInfo, model string) error {
	switch info.Kind {
	case rails.LlamaServer:
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, m := range info.Models {
			if m.Tools != nil && !*m.Tools && (m.ID == model || len(info.Models) == 1) {
				return &ToolsUnsupportedError{Model: model, Server: ServerName(info.Kind), Field: "chat_template_caps.supports_tools is false in GET /props",
					Remedy: "serve a model whose chat template supports tools, with --jinja"}
			}
		}
	case rails.Ollama:
		// An Ollama older than 0.6.4 lists no capabilities at all: that says nothing of tools.
		if m := ollamaShow(ctx, c, model); m.err == nil && len(m.capabilities) > 0 && !m.tools {
			return &ToolsUnsupportedError{Model: model, Server: ServerName(info.Kind),
				Field:  fmt.Sprintf("the capabilities of POST /api/show are [%s], without \"tools\"", strings.Join(m.capabilities, ", ")),
				Remedy: "pull a model whose capabilities list tools (ollama show MODEL lists them)"}
		}
	}
	return nil
}
