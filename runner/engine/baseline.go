package engine

import (
	"context"
	"errors"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/untrusted"
)

// What the verify said of the tree before a run changed it (Result.Baseline).
const (
	BaselineRed     = "red"
	BaselineGreen   = "green"
	BaselineSkipped = "skipped"
)

// What a kept change showed, by its baseline: a verify red before and green after shows the task
// done; one green before and after shows only that nothing broke.
const (
	ShownFixed = "fixed"
	ShownHeld  = "held"
)

// Shown is what a green verify after the change showed, given the baseline; "" when it was
// skipped.
func Shown(baseline string) string {
	switch baseline {
	case BaselineRed:
		return ShownFixed
	case BaselineGreen:
		return ShownHeld
	}
	return ""
}

// ShownWords says, for an outcome line, what a kept change's green verify showed: "" when the
// baseline was skipped. change names the change ("the edit", "the run").
func ShownWords(shown, change string) string {
	switch shown {
	case ShownFixed:
		return "; fixed: the verify failed before " + change
	case ShownHeld:
		return "; held: the verify passed before " + change + " too, so it shows nothing broke, not that the task is done"
	}
	return ""
}

// Baseline runs the verify once in dir, on the tree before any change and before the first
// model request, and records its verdict for the result and the receipt. The no_baseline setting
// skips it; expect_red refuses a green baseline, as a verify that already passes cannot show a
// bug fixed. Any exit but 0 is red; a verify that cannot run (126, 127) or times out stops the
// run here, before any request.
func (r *Run) Baseline(ctx context.Context, verify, dir string) (string, error) {
	s := r.Spec.Settings
	if s.Bool(packs.NoBaseline) && s.Bool(packs.ExpectRed) {
		return "", BadInputf("{expect_red} needs the baseline, which {no_baseline} skips: drop one")
	}
	// A sandbox the operator requires is checked before the first request, baseline or not.
	if s.String(packs.SandboxSetting) == "require" {
		if ok, why := rails.SandboxAvailable(); !ok {
			return "", &rails.NoSandboxError{Why: why}
		}
	}
	if s.Bool(packs.NoBaseline) {
		r.baseline = BaselineSkipped
		r.Emit(BaselineSkippedEvent{Verdict: BaselineSkipped})
		return r.baseline, nil
	}
	r.Observe(ProgressEvent{Stage: StageVerify, Step: StepBaseline})
	vr, err := r.Verify(ctx, verify, dir)
	var couldNot *NoVerdictError
	if errors.As(err, &couldNot) {
		couldNot.Before = true
	}
	if err != nil {
		return "", err
	}
	tail := string(vr.Output)
	r.Emit(BaselineEvent{Verdict: vr.Verdict(), DurationMs: vr.Duration.Milliseconds(), Tail: tail})
	switch {
	case vr.Canceled:
		return "", context.Cause(ctx)
	case vr.Exited && vr.ExitCode == 0:
		r.baseline = BaselineGreen
	case vr.Exited && vr.ExitCode != 126 && vr.ExitCode != 127:
		// Any failure of the unchanged tree is red: a test runner that cannot build the code the
		// task is to fix exits 2 or 101, not 1. After an edit, only 1 is a verdict.
		r.baseline = BaselineRed
	default:
		// The command cannot run (126, 127), timed out or was killed: nothing it says after an
		// edit would be a verdict either.
		return "", &NoVerdictError{Command: verify, Verdict: vr.Verdict(), Tail: tail, Before: true}
	}
	if r.baseline == BaselineGreen && s.Bool(packs.ExpectRed) {
		return "", Refusalf("the verify `%s` already exits 0 before any change, and {expect_red} wants it to fail first: it cannot show the task done. Give a verify that fails until the change is made", untrusted.Escape(verify))
	}
	return r.baseline, nil
}
