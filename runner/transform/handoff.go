package transform

import (
	"context"

	"github.com/locumdev/locum/runner/engine"
)

// HandoffRule is how a transform's handoff chooses the attempt it shows: the last one the verify
// judged. Each attempt is written over the one before with that verify's output in hand, and
// locum cannot tell from a verify's output alone which red attempt was nearer passing.
const HandoffRule = "the last attempt whose edit the verify judged"

// handoff is a red transform's handoff: the last attempt the verify judged, as a diff of the file
// against its bytes before the run (which the file holds again), and that verify's output; or,
// where no edit reached the verify, why not.
func (t *transform) handoff(_ context.Context, failure string) *engine.HandoffDraft {
	d := &engine.HandoffDraft{Rule: HandoffRule}
	if t.verified == 0 || t.guard == nil {
		d.NoDiff, d.Next = noDiffWords(failure)
		return d
	}
	orig := t.guard.Original()
	d.Attempt = new(t.verified)
	d.Diff = engine.UnifiedDiff(t.display, string(orig), t.verifiedText)
	d.Verified = true
	d.VerifyTail = new(t.verifiedTail)
	d.Files = []engine.HandoffFile{engine.HandoffFileOf(t.display, orig, []byte(t.verifiedText))}
	d.Next = "The file is as it was before the run: start from this diff, fix what verify_tail shows, then run the verify yourself."
	return d
}

// noDiffWords say why a red transform has no attempt to hand over, and what the host does.
func noDiffWords(failure string) (why, next string) {
	switch failure {
	case "checks":
		return "no reply passed the checks before the verify, so none reached the file", "Edit the span yourself; error.message says what the replies got wrong."
	case "unchanged":
		return "every reply left the span as it was, so none reached the file", "Edit the span yourself, or delegate again with a task that names the change."
	}
	return "no reply could be applied as an edit, so none reached the file", "Edit the span yourself; error.message says why the replies could not be applied."
}
