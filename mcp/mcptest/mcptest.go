// Package mcptest connects a test's client to a locum MCP server over in-memory transports, so
// a test drives the server as a host would without a process or a pipe.
package mcptest

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/mcp"
)

// Connect starts a server with opts and returns a client session connected to it, and the
// context both run under. The test's clean-up closes the session, stops the server and waits
// for it to end. copts, which may be nil, are the client's options (a progress handler).
func Connect(tb testing.TB, opts mcp.Options, copts *sdk.ClientOptions) (*sdk.ClientSession, context.Context) {
	tb.Helper()
	server, err := mcp.New(opts)
	if err != nil {
		tb.Fatalf("mcp.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, serverT) }()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, copts).Connect(ctx, clientT, nil)
	if err != nil {
		cancel()
		<-done
		tb.Fatalf("connect to the MCP server: %v", err)
	}
	tb.Cleanup(func() {
		session.Close()
		cancel()
		<-done
	})
	return session, ctx
}
