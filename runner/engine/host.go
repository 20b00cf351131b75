package engine

import (
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
)

// HostSide is what a front end knows of the host's side of a run: the bytes of the call it
// wrote, and how to count the bytes of what it will print or return for a result, so that the
// run's journal carries what the delegation cost the host.
type HostSide struct {
	CallBytes   int64
	ResultBytes func(*Result) int64
}

// HostWork is what the host would have read and written to do a run's job itself, and what it
// should review of the work a run did, in bytes; a mode reports it as soon as it knows.
// ReviewInResult says the review is part of the result the front end delivers (a transform's
// compact diff), so that it is counted once, as the review, not again in the result.
type HostWork struct {
	Read, Write, Review int64
	ReviewInResult      bool
	// Turns are the host turns each way, as the mode counts them (cost.Turns).
	Turns cost.Turns
	// ResultInDirect says doing the job itself the host would read output as long as the
	// result (a script's), so the result's bytes count on both sides.
	ResultInDirect bool
}

// AddItemSaved counts, in the run's result, what one of its items saved the host, as that
// item's own run recorded it: a workflow's result then says what the whole call saved, while its
// journal keeps only its own parts (the call, the result), so that the ledger, which adds every
// run's parts, counts each item once.
func (r *Run) AddItemSaved(s *cost.Summary) {
	if s == nil {
		return
	}
	r.itemsMu.Lock()
	defer r.itemsMu.Unlock()
	if r.itemsSaved == nil {
		r.itemsSaved = &cost.Summary{}
	}
	*r.itemsSaved = r.itemsSaved.Add(*s)
}

// HostWork records what the host would have spent on the job itself (see HostWork).
func (r *Run) HostWork(w HostWork) { r.work = w }

// HostParams are the host-cost parameters the settings give: the family's list prices unless
// the operator priced a side, the bytes per token, the turns left.
func HostParams(s *packs.Settings) cost.Params {
	p := cost.Defaults()
	if s == nil {
		return p
	}
	if fam, ok := cost.Families[s.String(packs.HostFamily)]; ok {
		p.Prices = fam
	}
	for key, price := range map[packs.Key]*float64{packs.HostPriceIn: &p.Prices.In, packs.HostPriceOut: &p.Prices.Out, packs.HostPriceCached: &p.Prices.Cached} {
		if s.String(key) != "" {
			*price = s.Float(key)
			p.Prices.Source = "operator"
		}
	}
	if bpt := s.Float(packs.HostBytesPerToken); bpt > 0 {
		p.BytesPerToken = bpt
	}
	if _, ok := s.Get(packs.HostTurnsLeft); ok {
		p.TurnsLeft = s.Int(packs.HostTurnsLeft)
	}
	if set, ok := s.Get(packs.HostContextTokens); ok && set.Value != "" {
		if n := s.Int(packs.HostContextTokens); n > 0 {
			p.Context, p.ContextSource = n, "operator"
			if strings.HasPrefix(set.Source, "argument ") {
				p.ContextSource = "call"
			}
		}
	}
	return p
}

// GateParams are HostParams for a decision rather than a figure: a context the call gave may
// lower the operator's (or the default), never raise it, since a larger context makes more
// delegations pay and a call may only narrow a rail.
func GateParams(s *packs.Settings) cost.Params {
	p := HostParams(s)
	if p.ContextSource == "call" && p.Context > cost.DefaultContext {
		p.Context, p.ContextSource = cost.DefaultContext, "default"
	}
	// So for the turns left, over which what a run keeps out of the context is carried.
	if set, ok := s.Get(packs.HostTurnsLeft); ok && strings.HasPrefix(set.Source, "argument ") {
		p.TurnsLeft = min(p.TurnsLeft, cost.Defaults().TurnsLeft)
	}
	return p
}

// hostCost fills res.Host from the run's work and the front end's side. What the host reads
// back includes the estimate itself, so the result is measured once with a provisional
// estimate in place: the final one differs from it by the width of a few figures, a byte or two,
// and measuring again would render a large result (a million pairs under --json) again.
func (r *Run) hostCost(res *Result) {
	side := r.Spec.Host
	if side == nil || side.ResultBytes == nil {
		return
	}
	parts := cost.Parts{Read: r.work.Read, Write: r.work.Write, Review: r.work.Review, Turns: r.work.Turns, Call: side.CallBytes, Done: res.Status == StatusOK}
	switch {
	case r.Spec.Parent != nil:
		// A workflow's item shares its host's one call: the workflow's run counts the host's
		// turns for all its items, and an item's own are none.
		parts.Turns = cost.Turns{}
	case parts.Turns.Delegated < 1:
		// Whatever became of it, a call took the host a turn.
		parts.Turns.Delegated = 1
	}
	params := HostParams(r.Spec.Settings)
	set := func() {
		est := cost.Of(parts, params)
		sum := est.Summary()
		res.Host, res.HostSaved = &est, &sum
	}
	set()
	n := side.ResultBytes(res)
	if r.work.ReviewInResult {
		n = max(0, n-r.work.Review)
	}
	if res.Handoff != nil && r.Spec.Parent == nil {
		// The handoff is read with the result, and counted apart from it; a workflow's item's
		// is read in the workflow's result, and counted there.
		parts.Handoff = int64(res.Handoff.Bytes)
		n = max(0, n-parts.Handoff)
	}
	parts.Result = n
	if r.work.ResultInDirect && parts.Done {
		// Doing it itself the host would read as much: its own script's output.
		parts.Read += n
	}
	set()
	if r.itemsSaved != nil {
		sum := res.HostSaved.Add(*r.itemsSaved)
		res.HostSaved = &sum
	}
}
