package summarize

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// Mode is the summarize mode: a digest of a span whose every claim the evidence gate checks.
var Mode = engine.Mode{Name: "summarize", Model: engine.ChatModel,
	// A digest of 150 words comes back as about 1,000 bytes of claims.
	Prior: cost.ReadPrior(8, 1000), Unit: "span lines", Step: stepJob,
	Settings: slices.Concat(packs.ChatSettings, packs.HostSettings, []packs.Key{packs.RoleSetting, packs.MaxWords})}

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

// stepJob is a workflow item's digest, of the span the step's inputs name; it passes forward the
// claims the gate supported, each with its lines.
func stepJob(it engine.StepItem) (engine.StepJob, error) {
	j := &Job{File: it.Input("file", "file"), Lines: it.Input("lines", ""), Symbol: it.Input("symbol", "symbol")}
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
