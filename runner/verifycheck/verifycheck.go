// Package verifycheck is locum's verify-check mode: before a host spends a call, the verify it
// would hand a transform is run against small changes to the span as it is now (mutants), in a
// scratch copy of the tree, with no model. A verify that passes them all cannot tell a wrong edit
// of the span from a right one, and the host can choose a better one first.
package verifycheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/strength"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the verify-check mode: no model, the verify run against mutants of a span.
var Mode = engine.Mode{Name: "verify-check", Model: engine.NoModel, Outcome: outcome, Tool: tool,
	Settings: slices.Concat(packs.VerifySettings, packs.HostSettings, []packs.Key{packs.Mutants})}

func init() { engine.RegisterMode(Mode) }

// tool is the verify_check tool.
var tool = &engine.Tool{
	Description: "Can a transform's verify fail on its span? Runs it on small changes to it in a scratch copy; no model. " +
		"RED if it rejects none.",
	Args: append(slices.Clone(scope.SpanArgs), engine.ToolArg{Name: "verify", Required: true}),
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		j := &Job{File: a.String("file"), Lines: a.String("lines"), Symbol: a.String("symbol"), Verify: a.String("verify")}
		return engine.ToolJob{Job: j, File: j.File}, nil
	},
}

// Job is a request for one check: the span and the verify a transform of it would run.
type Job struct {
	File, Lines, Symbol, Verify string
	// Strength is what the check measured, once it ran.
	Strength *strength.Result
}

// Details are a check's part of its result: the span, and how many of its mutants the verify
// rejected.
type Details struct {
	engine.SpanDetails
	engine.StrengthDetails
}

// Mode is the verify-check mode.
func (*Job) Mode() engine.Mode { return Mode }

// Steps scope the span and run the verify against its mutants.
func (j *Job) Steps(p engine.Place) []engine.Step {
	return []engine.Step{{Name: "check", Run: func(ctx context.Context, r *engine.Run) error { return j.check(ctx, r, p) }}}
}

// defaultMutants is how many mutants a check runs where the operator's mutants setting is 0,
// which turns the measure off after a kept edit, not a check asked for by name.
const defaultMutants = 4

func (j *Job) check(ctx context.Context, r *engine.Run, p engine.Place) error {
	if strings.TrimSpace(j.Verify) == "" {
		return engine.BadInputf("{verify} is empty: give the command a transform of the span would run")
	}
	sc, err := scope.Read(r, p.Cwd, p.Root, j.File, j.Lines, j.Symbol)
	if err != nil {
		return err
	}
	r.Emit(engine.FileScopeEvent{File: sc.Display, Verify: new(j.Verify), Lines: sc.Range.String(), FileLines: len(sc.Text.Lines)})
	d := &Details{SpanDetails: sc.Details()}
	r.SetDetails(d)
	// Checking the verify is work a host would not do without locum: it saves it nothing by
	// itself, and costs the call.
	r.HostWork(engine.HostWork{Turns: cost.Turns{Delegated: 1}})
	n := int(r.Spec.Settings.Int(packs.Mutants))
	if n == 0 {
		n = defaultMutants
	}
	res, err := strength.Measure(ctx, r, strength.Options{Verify: j.Verify, Root: p.Root, Max: n,
		Spans: []strength.Span{{File: sc.Path, Text: []byte(sc.Text.Join()), Start: sc.Range.Start, End: sc.Range.End}}})
	if err != nil {
		return err
	}
	j.Strength = &res
	r.SetVerifyStrength(res.String())
	d.StrengthDetails = engine.StrengthDetails{VerifyStrength: res.String(), StrengthWords: res.Words("choose a verify that exercises the span"),
		Survivors: res.Survivors}
	switch {
	case res.Unknown != "":
		return &engine.RedError{Kind: "unmeasured", Reason: "the verify was not checked: " + res.Unknown}
	case res.Blind():
		return &engine.RedError{Kind: "blind", Reason: fmt.Sprintf("the verify cannot fail on %s lines %s as far as locum could show (verify_strength=%s)", sc.Display, sc.Range, res)}
	}
	return nil
}

// outcome is the check's one line: "verify-check: calc.go lines 3-9: the verify rejected all 4
// changes locum made to the span".
func outcome(r *engine.Result) string {
	d, ok := r.Details.(*Details)
	if !ok || d.StrengthWords == "" {
		return ""
	}
	return fmt.Sprintf("%s: %s lines %s: %s", r.Mode, untrusted.Escape(d.File), d.Lines, d.StrengthWords)
}
