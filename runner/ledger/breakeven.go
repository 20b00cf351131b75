package ledger

import (
	"fmt"
	"sort"
	"strings"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

const (
	// Window is how many of a mode, role and model's latest runs that count make its history;
	// MinRuns how many it takes before the history replaces the prior; Recent how many the stop
	// rule sums.
	Window  = 20
	MinRuns = 5
	Recent  = 10
	// KindDoesNotPay is the error kind of a run refused for its cost: it did no work and
	// measured nothing, so no history counts it.
	KindDoesNotPay = "does_not_pay"
	// readJournals is how many of the newest journals status and the MCP server read for the
	// break-even, and the gate at most for its one role and model.
	readJournals = 2000
)

// Counts says a run is part of a mode and role's history: the model was asked (a run stopped
// before any request, for want of a server or for its size, says nothing of it), it was not
// refused for its cost, and it was a call of its own: a workflow's item shares its host's one
// call with the other items, so it says nothing of what a call of that size costs.
func Counts(e Entry) bool {
	return e.Costed && e.Asked > 0 && e.Kind != KindDoesNotPay && e.Parent == ""
}

// BreakEven states, for each registered mode with a break-even by size and each role and model
// its runs used, where a run pays the host: from the last Window runs that count, or the mode's
// documented prior until there are MinRuns of them. A mode no run used has its prior alone.
func BreakEven(entries []Entry, p cost.Params) []cost.Rule {
	type key struct{ mode, role, model string }
	byKey := map[key][]Entry{}
	for _, e := range entries {
		if Counts(e) {
			k := key{e.Mode, e.Role, e.Model}
			byKey[k] = append(byKey[k], e)
		}
	}
	var rules []cost.Rule
	for _, name := range engine.RegisteredModes() {
		m, _ := engine.LookupMode(name)
		if m.Unit == "" {
			continue
		}
		used := false
		for k, runs := range byKey {
			if k.mode == m.Name {
				used = true
				rules = append(rules, Rule(m, k.role, k.model, runs, p))
			}
		}
		if !used {
			rules = append(rules, Rule(m, "", "", nil, p))
		}
	}
	sort.Slice(rules, func(i, j int) bool {
		a, b := rules[i], rules[j]
		if a.Mode != b.Mode {
			return a.Mode < b.Mode
		}
		if a.Role != b.Role {
			return a.Role < b.Role
		}
		return a.Model < b.Model
	})
	return rules
}

// DirBreakEven is BreakEven over the newest journals in dir sealed under key, and what it left
// out; the priors alone where none can be read.
func DirBreakEven(dir string, key []byte, p cost.Params) ([]cost.Rule, Left) {
	entries, left, _ := Read(dir, key, Filter{Journals: readJournals})
	return BreakEven(entries, p), left
}

// Rule is mode m's break-even for role and model from their runs that count, oldest first.
func Rule(m engine.Mode, role, model string, runs []Entry, p cost.Params) cost.Rule {
	if len(runs) > Window {
		runs = runs[len(runs)-Window:]
	}
	h := m.Prior
	if len(runs) >= MinRuns {
		h = history(runs, m.Prior)
	}
	r := cost.Rule{Mode: m.Name, Role: role, Model: model, Unit: m.Unit, KeepRate: h.KeepRate(), History: h}
	if lines, ok := h.PaysAbove(p); ok {
		r.PaysAbove = &lines
	}
	if rate, ok := h.MinKeepRate(p); ok {
		r.MinKeepRate = &rate
	}
	recent := runs[max(0, len(runs)-Recent):]
	kept := 0
	usd := 0.0
	for _, e := range recent {
		est := e.Estimate(p)
		r.Net = cost.AddTokens(r.Net, est.Net)
		usd += est.USD
		if e.Kept() {
			kept++
		}
	}
	r.NetUSD = cost.Dollars(usd)
	r.Recent = len(recent)
	// Only the role's own runs stop it, never the prior: where at their keep rate a run is
	// expected to cost the host money below some size (at every size, where none pays), the
	// gate refuses such a run. The operator's delegate_when always still delegates it, and those
	// runs count, so a model that does better wins the role back.
	if h.Basis == "ledger" && (r.PaysAbove == nil || *r.PaysAbove > 1) {
		r.Stop = true
		r.StopBelow = r.PaysAbove
		r.Why = fmt.Sprintf("its last %d runs kept %d: at that rate a run of 1 %s is expected to cost the host $%.4f (estimated)",
			len(runs), h.Kept, strings.TrimSuffix(m.Unit, "s"), -h.Expect(1, p))
	}
	return r
}

// history is what runs measured, in the prior's place; where no kept run measured the edit's
// shape, or no run its span's lines, the prior's figures stand.
func history(runs []Entry, prior cost.History) cost.History {
	h := cost.History{Runs: len(runs), Basis: "ledger", WritePerRead: prior.WritePerRead, ReviewPerRead: prior.ReviewPerRead, BytesPerLine: prior.BytesPerLine,
		DirectTurns: prior.DirectTurns, DelegatedTurns: prior.DelegatedTurns}
	var call, result, read, write, review, spanRead, lines, direct, delegated int64
	turned := 0 // runs that recorded their turns (a journal from before the turn model did not)
	keptTurned := 0
	for _, e := range runs {
		call += e.Parts.Call
		// A red run's handoff is read with its result.
		result += e.Parts.Result + e.Parts.Handoff
		if e.Parts.Turns != (cost.Turns{}) {
			turned++
			delegated += e.Parts.Turns.Delegated
			if e.Kept() {
				keptTurned++
				direct += e.Parts.Turns.Direct
			}
		}
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
	if turned > 0 {
		h.DelegatedTurns = float64(delegated) / float64(turned)
	}
	if keptTurned > 0 {
		h.DirectTurns = float64(direct) / float64(keptTurned)
	}
	if read > 0 {
		h.WritePerRead = float64(write) / float64(read)
		h.ReviewPerRead = float64(review) / float64(read)
	}
	if lines > 0 {
		h.BytesPerLine = float64(spanRead) / float64(lines)
	}
	return h
}

// Gate is the break-even rule a transform obeys before any request: for a role and model whose
// own runs expect a loss at this size, the run is refused. nil where the run may go ahead.
func Gate(rules []cost.Rule, mode, role, model string, lines int) error {
	for _, r := range rules {
		if r.Mode != mode || r.Role != role || r.Model != model || !r.Stop {
			continue
		}
		if r.StopBelow != nil && int64(lines) >= *r.StopBelow {
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
		need := ""
		if r.MinKeepRate != nil {
			need = fmt.Sprintf(", and at any size above %s keep rate", cost.APercent(*r.MinKeepRate))
		}
		return &engine.RefusalError{Kind: KindDoesNotPay, Worded: rails.Textf("a %s of %d %s on %s does not pay: %s; at its %.0f%% keep rate it pays %s%s. Do this one yourself; nothing was sent (the operator may set {delegate_when} to always)",
			what, lines, r.Unit, untrusted.Escape(model), r.Why, 100*r.KeepRate, size, need)}
	}
	return nil
}

// GateFor reads the newest journals in dir sealed under key that count for mode, role and model,
// and holds a job of lines span lines to their break-even.
func GateFor(dir string, key []byte, mode, role, model string, lines int, p cost.Params) error {
	m, ok := engine.LookupMode(mode)
	if !ok || m.Unit == "" {
		return nil
	}
	entries, _, err := Read(dir, key, Filter{Mode: mode, Journals: readJournals, Limit: Window, Match: func(e Entry) bool {
		return Counts(e) && e.Role == role && e.Model == model
	}})
	if err != nil {
		return nil
	}
	return Gate([]cost.Rule{Rule(m, role, model, entries, p)}, mode, role, model, lines)
}
