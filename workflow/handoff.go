package workflow

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/locumdev/locum/runner/engine"
)

// HandoffRule is how a workflow's handoff chooses what it shows: each red item's own handoff, as
// the item's mode chose its attempt.
const HandoffRule = "each red item's own handoff, by its mode's rule"

// handoff is a red workflow's handoff: its red items' handoffs in step and item order, sharing
// the handoff's bound, and what to do with them given what became of the branch.
func (w *run) handoff(_ context.Context, _ string) *engine.HandoffDraft {
	w.mu.Lock()
	items := slices.Clone(w.handoffs)
	w.mu.Unlock()
	order := map[string]int{}
	for i, st := range w.wf.Steps {
		order[st.Name] = i
	}
	slices.SortFunc(items, func(a, b engine.ItemHandoff) int {
		return cmp.Or(cmp.Compare(order[a.Step], order[b.Step]), cmp.Compare(a.Index, b.Index))
	})
	d := &engine.HandoffDraft{Rule: HandoffRule, Items: items}
	for _, it := range items {
		for _, f := range it.Handoff.Files() {
			if len(d.Files) < engine.MaxHandoffFiles {
				d.Files = append(d.Files, f)
			}
		}
	}
	if len(items) == 0 {
		d.NoDiff = "no item ended red with an attempt to hand over (details.items says how each ended)"
	}
	switch {
	case w.status == StatusVerifyFailed:
		d.Next = "The final verify failed on the combined branch, which was dropped (details.verify_tail): fix the work yourself, starting from the items below."
	case w.offered:
		d.Next = fmt.Sprintf("The green items are on %s (locum runs show RUN_ID --diff): do each red item below yourself, starting from its diff.", w.branch)
	default:
		d.Next = "Do each red item below yourself, starting from its diff; details.items says how every item ended."
	}
	if len(items) == 0 && w.status != StatusVerifyFailed {
		d.Next = "Do the red items yourself; details.items says how each ended."
	}
	return d
}
