package engine

import "strings"

// Tool is how a host calls a mode as a tool (locum mcp): what the host is told of it, the
// arguments that say what to work on, and how a call's job is built from them. The mode's
// settings are the tool's arguments too, stated from their one declaration in packs, so a tool
// names none of them.
type Tool struct {
	// Description says when to call the tool and what comes back, and no more: a host keeps it
	// in its context on every turn of every session.
	Description string
	// Edits says a call changes the user's files, which a host may ask the person about first.
	// Branches says a call writes only a branch of its own, which the person accepts or not: it
	// changes none of the user's files and destroys nothing. Otherwise a call only reads.
	Edits, Branches bool
	// Args are the tool's own arguments, in the order a host reads them.
	Args []ToolArg
	// Job builds a call's job from its arguments, as the tool's input schema checked them.
	Job func(ToolArgs) (ToolJob, error)
}

// ToolArg is one argument of a tool that is no setting: what a call works on.
type ToolArg struct {
	Name string
	// Doc says what the name does not, in a few words; "" for nothing.
	Doc string
	// Bool says it is true or false; otherwise it is text.
	Bool     bool
	Required bool
}

// VerifyArg is the argument of a tool whose work is kept only when a command passes.
var VerifyArg = ToolArg{Name: "verify", Doc: "bash, from the repo root; fails until the task is done", Required: true}

// ToolArgs are a call's arguments, by name, as JSON decoded them.
type ToolArgs map[string]any

// String is the text argument name; "" when the call gave none.
func (a ToolArgs) String(name string) string {
	s, _ := a[name].(string)
	return s
}

// Bool is the true-or-false argument name; false when the call gave none.
func (a ToolArgs) Bool(name string) bool {
	b, _ := a[name].(bool)
	return b
}

// ToolJob is the job of one call and what the call says beside it.
type ToolJob struct {
	Job Job
	// File is the file the job reads or edits: calls on one file take turns. "" for none.
	File string
	// Argv is what the journal records as the run's arguments.
	Argv []string
	// Note, when set, says after the run what the result's structured content does not; "" for
	// nothing.
	Note func(*Result) string
}

// ToolName is the mode's tool's name: the mode's, with underscores for dashes.
func (m Mode) ToolName() string { return strings.ReplaceAll(m.Name, "-", "_") }
