package scope

import "github.com/locumdev/locum/runner/engine"

// SpanArgs are the tool arguments of a mode that works on a span of one file: the file, and
// the lines or the Go declaration of it (Read's lines and symbol).
var SpanArgs = []engine.ToolArg{
	{Name: "file", Required: true},
	{Name: "lines", Doc: "A-B, A- or A; default all"},
	{Name: "symbol", Doc: "or a Go declaration, such as Type.Method"},
}
