// Package cost estimates what a delegation saved or cost the host that asked for it, in the
// host's own tokens and money: what doing the job itself would have cost it (reading the span,
// the file or the folder; writing the edit), against what the delegation cost it (writing the
// call, reading the result, reviewing the change). Input and output tokens are counted apart,
// since a host's output costs several times its input; and what enters the host's context is
// carried over the turns it has left, where it is read again at the cached-input price. Every
// figure here is arithmetic on byte counts locum measured and a ratio and prices the operator
// sets: an estimate, labelled so.
package cost

import (
	"fmt"
	"math"
	"strings"
)

// MethodEstimated labels a figure derived from byte counts and a bytes-per-token ratio.
const MethodEstimated = "estimated"

// Parts are the byte counts of one run, as locum measured them.
type Parts struct {
	// Read and Write are what the host would have read and written to do the job itself: the
	// span, the file or the folder it would have read; the edit it would have typed (an edit
	// tool's old and new lines).
	Read  int64 `json:"read_bytes"`
	Write int64 `json:"write_bytes"`
	// Call is the call the host wrote (the command line, or the tool's name and arguments);
	// Result what came back to it (stderr and stdout, or the tool's text and structured
	// content); Review what it should read before relying on the work (the compact diff).
	Call   int64 `json:"call_bytes"`
	Result int64 `json:"result_bytes"`
	Review int64 `json:"review_bytes"`
	// Done says the work was shown done. A run that was not (red, refused, unchanged) saved the
	// host nothing: the job is still its own to do, and the call and the result were a loss.
	Done bool `json:"done"`
}

// Prices are a host family's prices in US dollars per million tokens.
type Prices struct {
	Family string  `json:"family"`
	In     float64 `json:"in"`
	Out    float64 `json:"out"`
	Cached float64 `json:"cached"`
	// Source says where the prices came from: "default" (the family's list price in
	// Families) or "operator" (a price setting).
	Source string `json:"source"`
}

// Families are the documented default prices per host family, US dollars per million tokens
// (input, output, cached input), from the providers' public price lists for their current
// mid-tier models. An operator who pays other prices sets host_price_in, host_price_out and
// host_price_cached.
var Families = map[string]Prices{
	"claude": {Family: "claude", In: 3, Out: 15, Cached: 0.30, Source: "default"},
	"gpt":    {Family: "gpt", In: 1.25, Out: 10, Cached: 0.125, Source: "default"},
	"gemini": {Family: "gemini", In: 1.25, Out: 10, Cached: 0.31, Source: "default"},
}

// Params are what turns bytes into tokens and money.
type Params struct {
	BytesPerToken float64 `json:"bytes_per_token"`
	// TurnsLeft is how many more turns the host's session will take: each re-reads what
	// entered its context, at the cached-input price.
	TurnsLeft int64  `json:"turns_left"`
	Prices    Prices `json:"prices"`
}

// Defaults are the documented defaults: 4 bytes a token, 10 turns left, the claude family.
func Defaults() Params {
	return Params{BytesPerToken: 4, TurnsLeft: 10, Prices: Families["claude"]}
}

// Side is a count of tokens read (In) and written (Out) by the host.
type Side struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// Estimate is one run's cost to the host, with the parts and the parameters it came from.
type Estimate struct {
	Method string `json:"method"`
	Params Params `json:"params"`
	Parts  Parts  `json:"parts"`
	// Direct is what doing the job itself costs the host: what it reads (In) and writes (Out).
	// Todo is the same for a run that did not do the job: the host still has it to do.
	Direct Side `json:"direct"`
	Todo   Side `json:"todo"`
	// Delegation is what the delegation cost the host: the result and the review it reads (In),
	// the call it writes (Out).
	Delegation Side `json:"delegation"`
	// Saved is the one-turn saving: Direct less Delegation, each way (negative: a loss).
	Saved Side `json:"saved"`
	// Carried is the cached-input tokens saved over the turns left: what the job itself would
	// have put in the host's context, less what the delegation put there, once a turn.
	Carried int64 `json:"carried"`
	// Net is Saved.In + Saved.Out + Carried: the tokens saved, net of losses.
	Net int64 `json:"net_tokens"`
	// USDOneTurn and USD price the one-turn saving and the carried one.
	USDOneTurn float64 `json:"usd_one_turn"`
	USD        float64 `json:"usd"`
}

// Tokens turns a byte count into tokens, rounding up: a part that exists costs a token at least.
func (p Params) Tokens(bytes int64) int64 {
	if bytes <= 0 {
		return 0
	}
	bpt := p.BytesPerToken
	if bpt <= 0 || math.IsNaN(bpt) || math.IsInf(bpt, 0) {
		bpt = 4
	}
	return int64(math.Ceil(float64(bytes) / bpt))
}

// Of estimates the cost of the run whose parts are given.
func Of(parts Parts, p Params) Estimate {
	e := Estimate{Method: MethodEstimated, Params: p, Parts: parts}
	job := Side{In: p.Tokens(parts.Read), Out: p.Tokens(parts.Write)}
	if parts.Done {
		e.Direct = job
	} else {
		e.Todo = job
	}
	e.Delegation = Side{In: p.Tokens(parts.Result), Out: p.Tokens(parts.Call)}
	if parts.Done {
		e.Delegation.In += p.Tokens(parts.Review)
	}
	e.Saved = Side{In: e.Direct.In - e.Delegation.In, Out: e.Direct.Out - e.Delegation.Out}
	entered := e.Saved.In + e.Saved.Out
	e.Carried = entered * max(p.TurnsLeft, 0)
	e.Net = e.Saved.In + e.Saved.Out + e.Carried
	oneTurn := float64(e.Saved.In)*p.Prices.In + float64(e.Saved.Out)*p.Prices.Out
	e.USDOneTurn = Dollars(oneTurn / 1e6)
	e.USD = Dollars((oneTurn + float64(e.Carried)*p.Prices.Cached) / 1e6)
	return e
}

// AddTokens adds two signed counts, stopping at the largest or smallest int64 rather than
// wrapping: a sum of figures from untrusted journals must not turn a loss into a saving.
func AddTokens(a, b int64) int64 {
	switch {
	case b > 0 && a > math.MaxInt64-b:
		return math.MaxInt64
	case b < 0 && a < math.MinInt64-b:
		return math.MinInt64
	}
	return a + b
}

// Dollars rounds a sum of money to a millionth of a dollar: below that a figure is noise of the
// estimate, and of float arithmetic.
func Dollars(usd float64) float64 { return math.Round(usd*1e6) / 1e6 }

// Summary is the estimate's sum, as a result carries it.
type Summary struct {
	Method string  `json:"method"`
	Net    int64   `json:"net_tokens"`
	USD    float64 `json:"usd"`
}

// Receipt is the sum as the receipt prints it (Estimate.Receipt).
func (s Summary) Receipt() string { return fmt.Sprintf("saved=%+dt(est)", s.Net) }

// Add is the sum of two runs' sums: a workflow's own and its items'.
func (s Summary) Add(o Summary) Summary {
	return Summary{Method: s.Method, Net: AddTokens(s.Net, o.Net), USD: s.USD + o.USD}
}

// Summary is the estimate's sum.
func (e Estimate) Summary() Summary { return Summary{Method: e.Method, Net: e.Net, USD: e.USD} }

// Receipt is the estimate as the receipt prints it: the tokens saved net of losses over the
// turns left, signed, labelled as an estimate.
func (e Estimate) Receipt() string { return fmt.Sprintf("saved=%+dt(est)", e.Net) }

// Words is the estimate for a person, one line.
func (e Estimate) Words() string {
	var b strings.Builder
	fmt.Fprintf(&b, "estimated at %g bytes a token: doing it itself %s, the delegation %s", e.Params.BytesPerToken, sideWords(e.Direct), sideWords(e.Delegation))
	if e.Todo != (Side{}) {
		fmt.Fprintf(&b, ", still to do %s", sideWords(e.Todo))
	}
	fmt.Fprintf(&b, "; saved %+d in and %+d out this turn, %+d over %d more turns; %s at %s prices (%s)",
		e.Saved.In, e.Saved.Out, e.Net, e.Params.TurnsLeft, Money(e.USD), e.Params.Prices.Family, e.Params.Prices.Source)
	return b.String()
}

// Money is a signed sum of US dollars for a person: +$0.0420, -$0.0010.
func Money(usd float64) string {
	if usd < 0 {
		return fmt.Sprintf("-$%.4f", -usd)
	}
	return fmt.Sprintf("+$%.4f", usd)
}

func sideWords(s Side) string { return fmt.Sprintf("%dt in + %dt out", s.In, s.Out) }
