package workflow

import (
	"context"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// sharedVerify is the one verify command every item of todo is judged by, "" where they are not
// all judged by one (each item its own, or a step that edits nothing), or where fewer than two
// items are to run: one item's verify red before its edit is a bug fix's usual start.
func sharedVerify(st packs.WorkflowStep, inputs []itemInputs, todo []int) string {
	if len(todo) < 2 || !packs.StepEdits(st.Mode) {
		return ""
	}
	verify := ""
	for i, n := range todo {
		v := inputs[n].judge
		if i > 0 && v != verify {
			return ""
		}
		verify = v
	}
	return verify
}

// redBaseline runs the verify every item of the step is judged by once, on the tree the items
// start from, before any item runs: where it already fails there, the cause is outside every item
// (no one item's edit can make the others green), and running them would spend each item's
// attempts on a verdict known before the first request. It returns the refusal that stops the
// step, nil where the verify passes, cannot give a verdict (each item's own baseline says so), or
// the operator chose to go on (on_red_baseline continue).
func (w *run) redBaseline(ctx context.Context, st packs.WorkflowStep, inputs []itemInputs, todo []int) error {
	verify := sharedVerify(st, inputs, todo)
	if verify == "" || w.r.Spec.Settings.String(packs.OnRedBaseline) == "continue" {
		return nil
	}
	wt, err := gitsafe.WorktreeDir(w.place.Root, w.r.ID+"/baseline-"+st.Name)
	if err == nil {
		wt, err = w.g.AddDetached(ctx, wt, w.head, false)
	}
	if err != nil {
		return err
	}
	defer w.g.Drop(ctx, wt)
	w.r.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "baseline " + st.Name})
	vr, err := w.r.Verify(ctx, verify, wt)
	if err != nil || vr.Canceled {
		return nil
	}
	w.r.Emit(engine.BaselineEvent{Verdict: vr.Verdict(), DurationMs: vr.Duration.Milliseconds(), Tail: string(vr.Output)})
	if !vr.Exited || vr.ExitCode == 0 || vr.ExitCode == 126 || vr.ExitCode == 127 {
		return nil
	}
	refusal := engine.Refusalf("step %s: its %d items are all judged by `%s`, which already fails (%s) on the tree they start from: no item's edit alone can make the others pass, so none was run and nothing was sent to a model. Make it pass first, or run them anyway with {on_red_baseline} continue",
		untrusted.Escape(st.Name), len(todo), untrusted.Escape(verify), vr.Verdict())
	refusal.Kind = KindRedBaseline
	return refusal
}

// KindRedBaseline is the refusal of a step whose shared verify failed before any edit.
const KindRedBaseline = "red_baseline"
