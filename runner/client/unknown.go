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
