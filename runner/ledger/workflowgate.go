package ledger

import (
	"fmt"
	"math"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// The shape of a workflow call, as a host sees it: one call, a line back per item, and where it
// edits, the branch to review (its diff) and to accept, each a turn.
const (
	// itemLineBytes is what one item's line of the result costs the host to read.
	itemLineBytes = 120
	// itemSpanLines is the span an item is taken to edit where the ledger knows none.
	itemSpanLines = 20
)

// WorkflowCall is a workflow's expected value for the host before it runs, in US dollars, from
// its first step's items: their mode's history h (their keep rate k, what a kept span saves a
// line), items of them over files files. Done directly, the host reads and edits each file
// where an item would be kept and runs the verify once (edits), or reads each file (no
// edits); delegated, it makes the call and reads a line per item, and where an item is kept,
// reviews the branch and accepts it.
func WorkflowCall(h cost.History, edits bool, items, files int, spanLines float64, p cost.Params) (usd float64, words string) {
	if items <= 0 || files <= 0 {
		return 0, "no items"
	}
	k := h.KeepRate()
	perFile := float64(items) / float64(files)
	fileKept := 1 - math.Pow(1-k, perFile) // a file with at least one kept item
	anyKept := 1 - math.Pow(1-k, float64(items))
	turn := float64(max(p.Context, 0)) * p.Prices.Cached
	var direct, delegated float64
	if edits {
		direct = 2*float64(files)*fileKept + anyKept
		delegated = 1 + 2*anyKept
	} else {
		direct = float64(files) * k
		delegated = 1
	}
	bpt := p.BytesPerToken
	if bpt <= 0 {
		bpt = 4
	}
	turns := float64(max(p.TurnsLeft, 0))
	in := (p.Prices.In + turns*p.Prices.Cached) / bpt
	out := (p.Prices.Out + turns*p.Prices.Cached) / bpt
	gainPerLine := (in*(1-h.ReviewPerRead) + out*h.WritePerRead) * h.BytesPerLine
	bytes := k*float64(items)*spanLines*gainPerLine - h.CallBytes*out - float64(items)*itemLineBytes*in
	usd = cost.Dollars(((direct-delegated)*turn + bytes) / 1e6)
	words = fmt.Sprintf("%s over %s at %s keep rate: %.1f host turns done directly against %.1f delegated, %s in all (estimated)",
		count(items, "item"), count(files, "file"), cost.APercent(k), direct, delegated, cost.Money(usd))
	return usd, words
}

// WorkflowGate refuses a workflow call expected to cost the host money: its first step's items
// of mode, over files files, at the keep rate of that mode's items on the ledger (sealed
// journals of items of workflows, for role and model), else the mode's prior.
func WorkflowGate(dir string, key []byte, mode, role, model string, edits bool, items, files int, p cost.Params) error {
	m, ok := engine.LookupMode(mode)
	if !ok || m.Prior.Runs == 0 {
		return nil
	}
	h, spanLines := m.Prior, float64(itemSpanLines)
	if dir != "" {
		entries, _, err := Read(dir, key, Filter{Mode: mode, Journals: readJournals, Limit: Window, Match: func(e Entry) bool {
			return e.Costed && e.Asked > 0 && e.Parent != "" && e.Role == role && e.Model == model
		}})
		if err == nil && len(entries) >= MinRuns {
			h = history(entries, m.Prior)
			n, lines := 0, 0
			for _, e := range entries {
				if e.SpanLines > 0 {
					n++
					lines += e.SpanLines
				}
			}
			if n > 0 {
				spanLines = float64(lines) / float64(n)
			}
		}
	}
	usd, words := WorkflowCall(h, edits, items, files, spanLines, p)
	if usd >= 0 {
		return nil
	}
	return &engine.RefusalError{Kind: KindDoesNotPay, Worded: rails.Textf("this workflow is expected to cost you more than doing it yourself: %s (%s). Do it yourself, or give its items more files to spread over; nothing was sent (the operator may set {delegate_when} to always)",
		words, h.Basis)}
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
