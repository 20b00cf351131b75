package cost

import (
	"fmt"
	"math"
	"strings"
)

// History is what is known of one mode and role's runs: how many ran and were kept, and the mean
// byte counts of their parts. Prior is the documented history used until the ledger has Runs of
// its own.
type History struct {
	Runs int `json:"runs"`
	Kept int `json:"kept"`
	// CallBytes and ResultBytes are the means over every run.
	CallBytes   float64 `json:"call_bytes"`
	ResultBytes float64 `json:"result_bytes"`
	// WritePerRead and ReviewPerRead are, over the kept runs, the bytes written and to review
	// per byte of the span read; BytesPerLine the span's bytes per line.
	WritePerRead  float64 `json:"write_per_read"`
	ReviewPerRead float64 `json:"review_per_read"`
	BytesPerLine  float64 `json:"bytes_per_line"`
	// DirectTurns is the mean of the host turns a kept run saved it doing itself, and
	// DelegatedTurns the mean of those every run cost it (Turns).
	DirectTurns    float64 `json:"direct_turns"`
	DelegatedTurns float64 `json:"delegated_turns"`
	// Basis is "prior" (the documented figures) or "ledger" (this machine's runs).
	Basis string `json:"basis"`
}

// KeepRate is the share of runs kept; 0 with no runs.
func (h History) KeepRate() float64 {
	if h.Runs == 0 {
		return 0
	}
	return float64(h.Kept) / float64(h.Runs)
}

// EditPrior is the history assumed for an edit before the ledger has any: a keep rate of one in
// two (21 of 40 small transforms of a 1.5B coding model were kept), the host-side bytes of one
// call and its result as locum's own benchmark measures them, and the turns of the transform's
// counterfactual (read the span, edit it, run the verify) against its one call.
func EditPrior() History {
	return History{Runs: 10, Kept: 5, CallBytes: 150, ResultBytes: 200, WritePerRead: 0.6, ReviewPerRead: 0.7, BytesPerLine: 30,
		DirectTurns: 3, DelegatedTurns: 1, Basis: "prior"}
}

// ReadPrior is the history assumed for a job that stands in for reading (a digest, a screen):
// nothing written, nothing to review, a result of resultBytes, kept at the rate given; one turn
// each way (the read, the call), so that it pays only on the bytes it keeps out of the context.
func ReadPrior(kept int, resultBytes float64) History {
	return History{Runs: 10, Kept: kept, CallBytes: 150, ResultBytes: resultBytes, BytesPerLine: 30,
		DirectTurns: 1, DelegatedTurns: 1, Basis: "prior"}
}

// terms are a run's expected value at keep rate k as a line in the span's size: every run costs
// fixed (its call and result bytes, its delegated turns), a kept run gains kept (the direct turns
// it saved) and perLine for each line of its span, all in dollars per million.
func (h History) terms(p Params) (fixed, kept, perLine float64) {
	bpt := p.BytesPerToken
	if bpt <= 0 {
		bpt = 4
	}
	turns := float64(max(p.TurnsLeft, 0))
	in := (p.Prices.In + turns*p.Prices.Cached) / bpt
	out := (p.Prices.Out + turns*p.Prices.Cached) / bpt
	turn := float64(max(p.Context, 0)) * p.Prices.Cached
	fixed = h.CallBytes*out + h.ResultBytes*in + h.DelegatedTurns*turn
	kept = h.DirectTurns * turn
	perLine = (in*(1-h.ReviewPerRead) + out*h.WritePerRead) * h.BytesPerLine
	return fixed, kept, perLine
}

// Expect is what a run of lines span lines is expected to save the host at the history's keep
// rate, in US dollars: what a kept run saves, weighted by the keep rate, less what every run
// costs. Negative: a delegation of that size is expected to cost the host money.
func (h History) Expect(lines int64, p Params) float64 {
	fixed, kept, perLine := h.terms(p)
	k := h.KeepRate()
	return Dollars((k*(kept+float64(max(lines, 0))*perLine) - fixed) / 1e6)
}

// PaysAbove is the smallest span, in lines, from which a run of this history is expected to save
// the host money (Expect above 0): 1 where the turns a kept run saves pay for every run at the
// keep rate whatever the size. ok is false where no span pays: a keep rate of 0, or a kept run
// that costs more to review than it saves and turns that do not pay.
func (h History) PaysAbove(p Params) (lines int64, ok bool) {
	fixed, kept, perLine := h.terms(p)
	k := h.KeepRate()
	if k <= 0 {
		return 0, false
	}
	need := fixed - k*kept // what the span's lines must make up
	if need < 0 {
		return 1, true
	}
	if perLine <= 0 || h.BytesPerLine <= 0 {
		return 0, false
	}
	// The smallest whole span above the break-even; the nudge keeps a break-even that falls on a
	// whole line, computed a rounding error short, from paying at that line. A span past any a
	// file has is no break-even at all.
	at := math.Floor(need/(k*perLine) + 1e-9)
	if math.IsNaN(at) || at < 0 || at >= maxSpan {
		return 0, false
	}
	return int64(at) + 1, true
}

// MinKeepRate is the keep rate above which a run of one line, and so a run of any size, is
// expected to pay: what every run costs over what a kept one saves. ok is false where no keep
// rate does (it would have to be above 1).
func (h History) MinKeepRate(p Params) (rate float64, ok bool) {
	fixed, kept, perLine := h.terms(p)
	if kept+perLine <= 0 {
		return 0, false
	}
	rate = fixed / (kept + perLine)
	return rate, rate <= 1
}

// maxSpan is the largest break-even stated, in lines; past it, no span pays.
const maxSpan = 1 << 24

// Rule is one mode and role's break-even, as status and the MCP server's instructions state it.
type Rule struct {
	Mode  string `json:"mode"`
	Role  string `json:"role"`
	Model string `json:"model"`
	// Unit is what PaysAbove counts ("span lines").
	Unit string `json:"unit"`
	// PaysAbove is the size at or above which a run is expected to pay; null where none does.
	PaysAbove *int64  `json:"pays_above"`
	KeepRate  float64 `json:"keep_rate"`
	// MinKeepRate is the keep rate above which a run of any size pays (History.MinKeepRate);
	// null where none does.
	MinKeepRate *float64 `json:"min_keep_rate"`
	History     History  `json:"history"`
	// Net and NetUSD are what the Recent last runs of the ledger saved the host, net of losses.
	Net    int64   `json:"net_tokens"`
	NetUSD float64 `json:"net_usd"`
	Recent int     `json:"recent_runs"`
	// Stop says the role's own runs, on journals locum sealed, expect a loss below StopBelow
	// (at every size where StopBelow is null): the gate refuses such a run, and a host tells the
	// person why, once.
	Stop      bool   `json:"stop"`
	StopBelow *int64 `json:"stop_below"`
	Why       string `json:"why"`
}

// Words is the rule in one line: "transform for role code pays from 21 span lines at a 50% keep
// rate (prior)".
func (r Rule) Words() string {
	what := r.Mode
	if r.Role != "" {
		what += " for role " + r.Role
	}
	if r.Model != "" {
		what += " on " + r.Model
	}
	var s string
	switch {
	case r.PaysAbove != nil && *r.PaysAbove <= 1:
		s = fmt.Sprintf("%s pays at any size at %s keep rate (%s)", what, APercent(r.KeepRate), r.History.Basis)
	case r.PaysAbove != nil:
		s = fmt.Sprintf("%s pays from %d %s at %s keep rate (%s)", what, *r.PaysAbove, r.Unit, APercent(r.KeepRate), r.History.Basis)
	default:
		s = fmt.Sprintf("%s never pays at %s keep rate (%s)", what, APercent(r.KeepRate), r.History.Basis)
	}
	if r.MinKeepRate != nil {
		s += fmt.Sprintf("; at any size above %s keep rate", APercent(*r.MinKeepRate))
	}
	switch {
	case r.Stop && r.StopBelow != nil:
		s += fmt.Sprintf("; stopped below %d %s: %s", *r.StopBelow, r.Unit, r.Why)
	case r.Stop:
		s += "; stopped: " + r.Why
	}
	return s
}

// APercent is a share as a percentage with its article, as it is read aloud: "a 50%", "an 80%",
// "an 11%".
func APercent(share float64) string {
	n := fmt.Sprintf("%.0f", 100*share)
	if strings.HasPrefix(n, "8") || n == "11" || n == "18" {
		return "an " + n + "%"
	}
	return "a " + n + "%"
}
