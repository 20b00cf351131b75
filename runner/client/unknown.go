package client

import (
	"context"

	"github.com/locumdev/locum/rails"
)

// unknownServer is a server no probe names: it is spoken to through the OpenAI API alone.
type unknownServer struct{ plain }

func (unknownServer) kind() rails.ServerKind { return rails.Unknown }
func (unknownServer) name() string           { return "" }

func (unknownServer) recognise(firstAnswer) bool { return false }

func (unknownServer) describe(context.Context, *Client, *ServerInfo, []listedModel) bool {
	return false
}

// A server locum cannot name gets what most take: OpenAI's reasoning_effort and the chat
// template's own switch.
func (unknownServer) thinkingFields(limit rails.ThinkingCap, _ ModelThinking) map[string]any {
	fields := map[string]any{"reasoning_effort": limit.Level}
	if limit.Off {
		fields["chat_template_kwargs"] = templateNoThinking()
	}
	return fields
}
