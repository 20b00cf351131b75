package workflow

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// oneLine is the first line of s, its control characters escaped.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return untrusted.Escape(s)
}

func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[cut at " + fmt.Sprint(n) + " bytes]\n"
}

// ItemLine is one item's line in a run's output: its step, number, status and outcome.
func ItemLine(it ItemResult) string {
	line := fmt.Sprintf("%s %d %s %s", untrusted.Escape(it.Step), it.Index, untrusted.Escape(it.Status), untrusted.Escape(it.Item))
	// An item that did not end green under a verify already red before its edit says so on its
	// line, so a step whose items all failed for a reason outside them reads as that, not as bad
	// edits. A green one's outcome says it already ("fixed: the verify failed before the edit").
	if it.Baseline == engine.BaselineRed && !it.Green() && it.Status != ItemConflict {
		line += " (baseline red)"
	}
	if it.Outcome != "" {
		line += ": " + untrusted.Escape(it.Outcome)
	}
	return line
}

// outcome is the run's one line: what it combined, and what the person does next.
func outcome(r *engine.Result) string {
	d, ok := r.Details.(*Details)
	if !ok || d.Workflow == "" || d.Ran == nil || len(d.Items) == 0 {
		return ""
	}
	items := d.Items
	green, red, blind := 0, 0, 0
	for _, it := range items {
		if it.Green() {
			green++
		} else {
			red++
		}
		if it.Blind() {
			blind++
		}
	}
	line := fmt.Sprintf("workflow %s: %d of %d items green", untrusted.Escape(d.Workflow), green, len(items))
	if red > 0 {
		line += fmt.Sprintf(", %d not", red)
	}
	if blind > 0 {
		line += fmt.Sprintf(", %d of them kept by a verify not shown able to fail on its span (read their diffs)", blind)
	}
	switch d.Status {
	case StatusCompleted:
		if d.Branch != "" && d.Kept != nil {
			line += fmt.Sprintf("; the final verify passed on %s (%d kept): read it with locum runs show --diff %s, then runs accept or runs reject", d.Branch, *d.Kept, r.RunID)
			if d.StrengthWords != "" {
				line += "; " + d.StrengthWords
			}
		}
	case StatusVerifyFailed:
		line += fmt.Sprintf("; the final verify failed on the combined branch (%s), which was dropped", cmp.Or(d.VerifyVerdict, "no verdict"))
	case StatusNoChange:
		line += "; no change to combine"
	case StatusInterrupted:
		if why := d.Resume; why != "" {
			line += "; interrupted, and it cannot be resumed: " + why
			break
		}
		line += fmt.Sprintf("; interrupted: locum run --resume %s goes on without redoing the green items", r.RunID)
	}
	return line
}
