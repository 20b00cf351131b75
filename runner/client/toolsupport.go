package client

import "fmt"

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
