package transform

import (
	"fmt"
	"slices"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the transform mode: a verify-gated edit of one span, by a chat model.
var Mode = engine.Mode{Name: "transform", Model: engine.ChatModel, EditsInPlace: true, Outcome: outcome,
	Prior: cost.EditPrior(), Unit: "span lines", Step: stepJob, Tool: tool,
	Settings: slices.Concat(packs.ChatSettings, packs.VerifySettings, packs.HostSettings, []packs.Key{packs.RoleSetting, packs.MaxAttempts,
		packs.EditGuard, packs.EditFormat, packs.Mutants, packs.ExpectRed, packs.NoBaseline, packs.HostHoldsSpan, packs.DelegateWhen}),
	StepInputs: slices.Concat(scope.SpanInputs("the file to edit"), []packs.StepInput{
		{Name: "task", Doc: "what to change, in plain words"},
		{Name: "verify", Doc: "the command whose exit 0 keeps an item's edit (exit 1 retries, anything else restores)", Kind: packs.InputVerify},
		packs.SettingInput(packs.EditGuard),
	})}

func init() { engine.RegisterMode(Mode) }

// Job is a request for one transform.
type Job struct {
	File, Lines, Symbol, Verify, Task string
	// TaskSource is what to call the task in a refusal; "" is "the task".
	TaskSource string
}

// Mode is the transform mode.
func (Job) Mode() engine.Mode { return Mode }

// TaskText is the task the prompt carries, held to the input budget before the run.
func (j Job) TaskText() (what, text string) { return j.TaskSource, j.Task }

// Steps are the transform's steps, its crash record keyed by the operator's key.
func (j Job) Steps(p engine.Place) []engine.Step {
	var key []byte
	if p.RollbackKey != nil {
		key = p.RollbackKey()
	}
	return Steps(Options{File: j.File, Lines: j.Lines, Symbol: j.Symbol, Verify: j.Verify, Task: j.Task,
		Cwd: p.Cwd, Root: p.Root, RollbackKey: key, PayGate: p.PayGate})
}

// stepJob is a workflow item's transform: its span, task and verify from the step's inputs, the
// item's verify the workflow's where the step gives none; its edit_guard is a setting the
// workflow applies. It passes nothing forward: what it did is its commit.
func stepJob(it engine.StepItem) (engine.StepJob, error) {
	j := Job{File: it.Input("file"), Lines: it.Input("lines"), Symbol: it.Input("symbol"), Verify: it.Input("verify"), Task: it.Input("task")}
	return engine.StepJob{Job: j}, nil
}

// tool is the transform tool: a kept edit replaces lines of a file, so it edits, for a host that
// asks before such calls.
var tool = &engine.Tool{
	Description: "Edit one span of one file with the local model, kept only if `verify` exits 0 (exit 1 retries " +
		"with its output; anything else, or a cancel, restores the file). For a bounded edit a command can check. " +
		"Returns a line (status, outcome, saving) and locum's --json result (details.changes: the edit). " +
		"isError: RED (file unchanged), REFUSED (nothing sent; error.command is for the person to run), ERROR.",
	Edits: true,
	Args: append(slices.Clone(scope.SpanArgs),
		engine.VerifyArg,
		engine.ToolArg{Name: "task", Doc: "what to change, in plain words", Required: true}),
	Job: func(a engine.ToolArgs) (engine.ToolJob, error) {
		j := Job{File: a.String("file"), Lines: a.String("lines"), Symbol: a.String("symbol"), Verify: a.String("verify"), Task: a.String("task")}
		return engine.ToolJob{Job: j, File: j.File, Argv: []string{j.Task}}, nil
	},
}

// outcome is the edit's one line: "transform: kept a.go lines 3-9 (+2 -1), verify exit 0"; ""
// for a run that never reached the file.
func outcome(r *engine.Result) string {
	d, ok := r.Details.(*Details)
	if !ok || d.File == "" || d.Outcome == "" {
		return ""
	}
	file := untrusted.Escape(d.File)
	if d.Outcome == "unchanged" && r.Status == engine.StatusError && r.Error != nil {
		// The run stopped before any edit for a reason not the model's answer (a timeout, no
		// server, a signal): "unchanged" alone would read as the model's leaving the span so.
		return fmt.Sprintf("%s: %s before any edit of %s lines %s; the file is unchanged", r.Mode, stoppedWords(r.Error.Kind), file, d.Lines)
	}
	line := fmt.Sprintf("%s: %s %s lines %s", r.Mode, d.Outcome, file, d.Lines)
	if d.Symbol != "" {
		line += " (" + untrusted.Escape(d.Symbol) + ")"
	}
	shown := ""
	if d.Kept != nil {
		line += " (" + d.Diff + ")"
		shown = d.Shown
	}
	if exit := d.VerifyExit; exit != nil && *exit != nil {
		line += fmt.Sprintf(", verify exit %d", **exit)
	}
	line += engine.ShownWords(shown, "the edit")
	if d.StrengthWords != "" {
		line += "; " + d.StrengthWords
	}
	return line
}

// stoppedWords says what ended a run that stopped before any edit, by its error kind.
func stoppedWords(kind string) string {
	if kind == "timeout" {
		return "timed out"
	}
	return "stopped (" + untrusted.Escape(kind) + ")"
}
