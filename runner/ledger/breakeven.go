package ledger

import (
	"fmt"
	"sort"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

const (
	// Window is how many of a mode and role's latest costed runs make its history; MinRuns how
	// many it takes before the history replaces the prior; Recent how many the stop rule sums.
	Window  = 20
	MinRuns = 5
	Recent  = 10
	// KindDoesNotPay is the error kind of a run refused for its cost: it did no work and
	// measured nothing, so no history counts it.
	KindDoesNotPay = "does_not_pay"
)

// BreakEven states, for each registered mode with a break-even by size and each role its runs
// used, where a run pays the host: from the last Window costed runs of that mode and role, or the
// mode's documented prior until there are MinRuns of them.
func BreakEven(entries []Entry, p cost.Params) []cost.Rule {
	type key struct{ mode, role string }
	byKey := map[key][]Entry{}
	for _, e := range entries {
		if e.Costed && e.Kind != KindDoesNotPay {
			k := key{e.Mode, e.Role}
			byKey[k] = append(byKey[k], e)
		}
	}
	var rules []cost.Rule
	for _, name := range engine.RegisteredModes() {
		m, _ := engine.LookupMode(name)
		if m.Unit == "" {
			continue
		}
		roles := map[string]bool{}
		for k := range byKey {
			if k.mode == m.Name {
				roles[k.role] = true
			}
		}
		if len(roles) == 0 {
			roles[""] = true
		}
		for role := range roles {
			rules = append(rules, Rule(m, role, byKey[key{m.Name, role}], p))
		}
	}
	sort.Slice(rules, func(i, j int) bool {
		if rules[i].Mode != rules[j].Mode {
			return rules[i].Mode < rules[j].Mode
		}
		return rules[i].Role < rules[j].Role
	})
	return rules
}

// DirBreakEven is BreakEven over the journals in dir; the prior alone where none can be read.
func DirBreakEven(dir string, p cost.Params) []cost.Rule {
	entries, _, _ := Read(dir, Filter{})
	return BreakEven(entries, p)
}

// Rule is mode m's break-even for role from its runs, oldest first.
func Rule(m engine.Mode, role string, runs []Entry, p cost.Params) cost.Rule {
	if len(runs) > Window {
		runs = runs[len(runs)-Window:]
	}
	h := m.Prior
	if len(runs) >= MinRuns {
		h = history(runs, m.Prior)
	}
	r := cost.Rule{Mode: m.Name, Role: role, Unit: m.Unit, KeepRate: h.KeepRate(), History: h}
	if len(runs) > 0 {
		r.Model = runs[len(runs)-1].Model
	}
	if lines, ok := h.PaysAbove(p); ok {
		r.PaysAbove = &lines
	}
	recent := runs[max(0, len(runs)-Recent):]
	kept := 0
	for _, e := range recent {
		r.Net += e.Estimate(p).Net
		if e.Kept() {
			kept++
		}
	}
	r.Recent = len(recent)
	if r.Recent >= MinRuns && r.Net < 0 {
		r.Stop = true
		r.Why = fmt.Sprintf("its last %d runs kept %d and cost the host %d tokens net (estimated)", r.Recent, kept, -r.Net)
	}
	return r
}

// history is what runs measured, in the prior's place; where no kept run measured the edit's
// shape, or no run its span's lines, the prior's figures stand.
func history(runs []Entry, prior cost.History) cost.History {
	h := cost.History{Runs: len(runs), Basis: "ledger", WritePerRead: prior.WritePerRead, ReviewPerRead: prior.ReviewPerRead, BytesPerLine: prior.BytesPerLine}
	var call, result, read, write, review, spanRead, lines int64
	for _, e := range runs {
		call += e.Parts.Call
		result += e.Parts.Result
		if e.SpanLines > 0 && e.Parts.Read > 0 {
			spanRead += e.Parts.Read
			lines += int64(e.SpanLines)
		}
		if !e.Kept() {
			continue
		}
		h.Kept++
		read += e.Parts.Read
		write += e.Parts.Write
		review += e.Parts.Review
	}
	h.CallBytes = float64(call) / float64(len(runs))
	h.ResultBytes = float64(result) / float64(len(runs))
	if read > 0 {
		h.WritePerRead = float64(write) / float64(read)
		h.ReviewPerRead = float64(review) / float64(read)
	}
	if lines > 0 {
		h.BytesPerLine = float64(spanRead) / float64(lines)
	}
	return h
}

// Gate is the break-even rule a transform obeys before any request: a span of lines under the
// break-even of a role whose recent runs lost the host tokens is refused, and so is every span
// of one that pays at no size. nil where the run may go ahead.
func Gate(rules []cost.Rule, mode, role string, lines int) error {
	for _, r := range rules {
		if r.Mode != mode || r.Role != role || !r.Stop {
			continue
		}
		if r.PaysAbove != nil && int64(lines) >= *r.PaysAbove {
			return nil
		}
		what := r.Mode
		if r.Role != "" {
			what += " for role " + r.Role
		}
		size := "at no size"
		if r.PaysAbove != nil {
			size = fmt.Sprintf("from %d %s", *r.PaysAbove, r.Unit)
		}
		return &engine.RefusalError{Kind: KindDoesNotPay, Worded: rails.Textf("a %s of %d %s does not pay: %s; at its %.0f%% keep rate it pays %s. Do this one yourself; nothing was sent (the operator may set {delegate_when} to always)",
			what, lines, r.Unit, r.Why, 100*r.KeepRate, size)}
	}
	return nil
}
