package scope

import (
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// SpanArgs are the tool arguments of a mode that works on a span of one file: the file, and
// the lines or the declaration of it (Read's lines and symbol).
var SpanArgs = []engine.ToolArg{
	{Name: "file", Required: true},
	{Name: "lines", Doc: "A-B, A- or A; default all"},
	{Name: "symbol", Doc: "or a declaration, such as Type.method"},
}

// SpanInputs are the workflow step inputs of a mode that works on a span of one file: the file
// (what file is, from the repository root) and the lines or the declaration of it, the file
// and the declaration the item's where the step gives none.
func SpanInputs(file string) []packs.StepInput {
	return []packs.StepInput{
		{Name: "file", Doc: file + ", from the repository root", Item: "file", Kind: packs.InputPath},
		{Name: "lines", Doc: "the span's lines, " + LinesForm + ", instead of the whole file"},
		{Name: "symbol", Doc: "instead of lines, the span is this declaration with its decorators and doc comment, such as Type.Method or Class.method", Item: "symbol"},
	}
}
