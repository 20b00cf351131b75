package cost

import (
	"fmt"
	"math"
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
// two (21 of 40 small transforms of a 1.5B coding model were kept) and the host-side bytes of
// one call and its result as locum's own benchmark measures them.
func EditPrior() History {
	return History{Runs: 10, Kept: 5, CallBytes: 150, ResultBytes: 200, WritePerRead: 0.6, ReviewPerRead: 0.7, BytesPerLine: 30, Basis: "prior"}
}

// ReadPrior is the history assumed for a job that stands in for reading (a digest, a screen):
// nothing written, nothing to review, a result of resultBytes, kept at the rate given.
func ReadPrior(kept int, resultBytes float64) History {
	return History{Runs: 10, Kept: kept, CallBytes: 150, ResultBytes: resultBytes, BytesPerLine: 30, Basis: "prior"}
}

// PaysAbove is the smallest span, in lines, over which a run of this history is expected to save
// the host money: its keep rate times what a kept run saves per byte of span must cover what
// every run costs (the call written, the result read). ok is false where no span pays: a keep
// rate of 0, or a kept run that costs more to review than it saves.
func (h History) PaysAbove(p Params) (lines int64, ok bool) {
	bpt := p.BytesPerToken
	if bpt <= 0 {
		bpt = 4
	}
	turns := float64(max(p.TurnsLeft, 0))
	in := (p.Prices.In + turns*p.Prices.Cached) / bpt
	out := (p.Prices.Out + turns*p.Prices.Cached) / bpt
	gain := in*(1-h.ReviewPerRead) + out*h.WritePerRead // per byte of span, for a kept run
	cost := h.CallBytes*out + h.ResultBytes*in          // per run
	k := h.KeepRate()
	if k <= 0 || gain <= 0 || h.BytesPerLine <= 0 {
		return 0, false
	}
	// The smallest whole span above the break-even; the nudge keeps a break-even that falls on a
	// whole line, computed a rounding error short, from paying at that line. A span past any a
	// file has is no break-even at all.
	at := math.Floor(cost/(k*gain)/h.BytesPerLine + 1e-9)
	if math.IsNaN(at) || at < 0 || at >= maxSpan {
		return 0, false
	}
	return int64(at) + 1, true
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
	History   History `json:"history"`
	// Net and NetUSD are what the Recent last runs of the ledger saved the host, net of losses.
	Net    int64   `json:"net_tokens"`
	NetUSD float64 `json:"net_usd"`
	Recent int     `json:"recent_runs"`
	// Stop says the recent runs cost the host money: a host delegates this role a job under
	// StopBelow no more, and tells the person why, once. StopBelow is the break-even, or where
	// no span pays on the ledger, the prior's, so that a large job may still win the role back.
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
	s := fmt.Sprintf("%s never pays at a %.0f%% keep rate (%s)", what, 100*r.KeepRate, r.History.Basis)
	if r.PaysAbove != nil {
		s = fmt.Sprintf("%s pays from %d %s at a %.0f%% keep rate (%s)", what, *r.PaysAbove, r.Unit, 100*r.KeepRate, r.History.Basis)
	}
	switch {
	case r.Stop && r.StopBelow != nil:
		s += fmt.Sprintf("; stopped below %d %s: %s", *r.StopBelow, r.Unit, r.Why)
	case r.Stop:
		s += "; stopped: " + r.Why
	}
	return s
}
