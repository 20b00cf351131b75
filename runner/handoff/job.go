package handoff

import (
	"slices"
	"strconv"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/evidence"
)

// Mode is the handoff mode: a log or long text compressed into a handoff whose every item the
// evidence gate checks.
var Mode = engine.Mode{Name: "handoff", Model: engine.ChatModel,
	// No handoff has been measured yet: it is assumed kept as often as a digest, and its result
	// (about ten items of 120 words in all, each with its section, lines and a quote) at 1,500
	// bytes.
	Prior: cost.ReadPrior(8, 1500), Unit: "log lines", Step: stepJob, Tool: tool,
	Settings: slices.Concat(packs.ChatSettings, packs.HostSettings, []packs.Key{packs.RoleSetting, packs.MaxWords}),
	StepInputs: []packs.StepInput{
		{Name: "file", Doc: "the log or text file to hand over, from the repository root", Item: "file", Kind: packs.InputPath},
		{Name: "tail", Doc: "only the file's last N lines, for a file over the input budget"},
		{Name: "focus", Doc: "what the handoff is for"},
	}}

func init() { engine.RegisterMode(Mode) }

// Job is a request for one handoff. Items holds the gate's verdicts once the run reached the
// compress step, nil before.
type Job struct {
	File, Focus string
	// Tail, above 0, hands over the file's last Tail lines alone.
	Tail  int
	Items []Item
}

// Mode is the handoff mode.
func (*Job) Mode() engine.Mode { return Mode }

// Steps are the handoff's steps; they fill j.Items.
func (j *Job) Steps(p engine.Place) []engine.Step {
	return Steps(Options{File: j.File, Focus: j.Focus, Tail: j.Tail, Cwd: p.Cwd, Root: p.Root}, &j.Items)
}

// ParseTail reads a count of last lines as a tool call or a step gives it: "" for the whole file,
// else a whole number from 1.
func ParseTail(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || strings.HasPrefix(s, "+") {
		return 0, engine.BadInputf("{tail} %q: want a whole number of lines from 1", s)
	}
	return n, nil
}

// tool is the handoff tool.
var tool = &engine.Tool{
	Description: "A handoff of a log or long file by the local model (work, done, open, files, commands, next), " +
		"each item citing its lines; trust only supported items.",
	Args: []engine.ToolArg{
		{Name: "file", Required: true},
		{Name: "tail", Doc: "N: the last N lines only"},
		{Name: "focus", Doc: "what it is for"},
	},
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		tail, err := ParseTail(a.String("tail"))
		if err != nil {
			return engine.ToolJob{}, err
		}
		j := &Job{File: a.String("file"), Tail: tail, Focus: a.String("focus")}
		var argv []string
		if j.Focus != "" {
			argv = []string{j.Focus}
		}
		return engine.ToolJob{Job: j, File: j.File, Argv: argv}, nil
	},
}

// stepJob is a workflow item's handoff of the file the step's inputs name; it passes forward the
// items the gate supported, each with its section and lines.
func stepJob(it engine.StepItem) (engine.StepJob, error) {
	file, focus := it.Input("file"), it.Input("focus")
	tail, err := ParseTail(it.Input("tail"))
	if err != nil {
		return engine.StepJob{}, err
	}
	j := &Job{File: file, Tail: tail, Focus: focus}
	return engine.StepJob{Job: j, Output: func() string { return evidence.SupportedLines(j.Items) }}, nil
}
