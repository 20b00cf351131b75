package summarize

import (
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// Mode is the summarize mode: a digest of a span whose every claim the evidence gate checks.
var Mode = engine.Mode{Name: "summarize", Model: engine.ChatModel,
	// A digest of 150 words comes back as about 1,000 bytes of claims.
	Prior: cost.ReadPrior(8, 1000), Unit: "span lines"}

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
