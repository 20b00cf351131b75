package summarize

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
)

// Mode is the summarize mode: a digest of a span whose every claim the evidence gate checks.
var Mode = engine.Mode{Name: "summarize", Model: engine.ChatModel,
	// A digest of 150 words comes back as about 1,000 bytes of claims.
	Prior: cost.ReadPrior(8, 1000), Unit: "span lines", Step: stepJob, Tool: tool,
	Settings:   slices.Concat(packs.ChatSettings, packs.HostSettings, []packs.Key{packs.RoleSetting, packs.MaxWords}),
	StepInputs: scope.SpanInputs("the file to digest")}

func init() { engine.RegisterMode(Mode) }

// Job is a request for one digest. Claims holds the gate's verdicts once the run reached the
// digest, nil before.
type Job struct {
	File, Lines, Symbol, Focus string
	Claims                     []Claim
}

// Mode is the summarize mode.
func (*Job) Mode() engine.Mode { return Mode }

// Steps are the digest's steps; they fill j.Claims.
func (j *Job) Steps(p engine.Place) []engine.Step {
	return Steps(Options{File: j.File, Lines: j.Lines, Symbol: j.Symbol, Focus: j.Focus, Cwd: p.Cwd, Root: p.Root}, &j.Claims)
}

// tool is the summarize tool.
var tool = &engine.Tool{
	Description: "A digest of a file span by the local model, when reading the span would cost you more than it is " +
		"worth. Each claim cites the lines that back it; trust only claims marked supported, and open their lines " +
		"before acting on one. Returns locum's --json result; isError: RED when no claim is supported, or REFUSED.",
	Args: append(slices.Clone(scope.SpanArgs), engine.ToolArg{Name: "focus", Doc: "what the digest should be about"}),
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		j := &Job{File: a.String("file"), Lines: a.String("lines"), Symbol: a.String("symbol"), Focus: a.String("focus")}
		var argv []string
		if j.Focus != "" {
			argv = []string{j.Focus}
		}
		return engine.ToolJob{Job: j, File: j.File, Argv: argv}, nil
	},
}

// stepJob is a workflow item's digest, of the span the step's inputs name; it passes forward the
// claims the gate supported, each with its lines.
func stepJob(it engine.StepItem) (engine.StepJob, error) {
	j := &Job{File: it.Input("file"), Lines: it.Input("lines"), Symbol: it.Input("symbol")}
	return engine.StepJob{Job: j, Output: func() string {
		var b strings.Builder
		for _, c := range j.Claims {
			if c.Supported() {
				fmt.Fprintf(&b, "- %s (lines %d-%d)\n", c.Text, c.Lines[0], c.Lines[1])
			}
		}
		return b.String()
	}}, nil
}
