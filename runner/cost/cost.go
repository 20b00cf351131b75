// Package cost estimates what a delegation saved or cost the host that asked for it, in the
// host's own tokens and money, in two terms. The turn term: every turn of a host's session
// re-reads its whole context, C tokens at the cached-input price, so a job the host does itself
// in four turns (read, edit, run the verify, read its verdict) costs it four re-reads of C where
// one call costs one. The byte term: what doing the job itself would have put through the host
// (reading the span, the file or the folder; writing the edit) against what the delegation put
// through it (writing the call, reading the result, reviewing the change), input and output
// apart, and what entered its context carried over the turns it has left. Every figure here is
// arithmetic on counts locum measured and a ratio, a context size and prices the host or the
// operator gave: an estimate, labelled so.
package cost

import (
	"fmt"
	"math"
	"strings"
)

// MethodEstimated labels a figure derived from counts locum measured and the parameters;
// MethodMeasured one the host's own usage reported.
const (
	MethodEstimated = "estimated"
	MethodMeasured  = "measured"
)

// Turns are host turns: requests of the host's session, each of which re-reads its context.
type Turns struct {
	// Direct is how many turns doing the job itself takes the host (for a transform: reading
	// the span, the edit, running the verify, and an edit and a verify more per red round the
	// run needed). Delegated is how many the delegation took it: the call, and what its result
	// sends the host to do (a diff to read, a branch to review and accept).
	Direct    int64 `json:"direct"`
	Delegated int64 `json:"delegated"`
}

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
	// Handoff is what a red run's result hands the host beside the rest of it (the attempt that
	// came closest, the verify's tail): read, whatever became of the run, so a cost of the
	// delegation, counted apart from Result.
	Handoff int64 `json:"handoff_bytes,omitempty"`
	// Turns are the host turns each way (see Turns).
	Turns Turns `json:"turns"`
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
	// CacheWrite is the price of input written to the cache, which a measured request reports
	// apart; 0 where the family lists none.
	CacheWrite float64 `json:"cache_write"`
	// Source says where the prices came from: "default" (the family's list price in
	// Families) or "operator" (a price setting).
	Source string `json:"source"`
}

// Families are the documented default prices per host family, US dollars per million tokens
// (input, output, cached input), from the providers' public price lists for their current
// mid-tier models. An operator who pays other prices sets host_price_in, host_price_out and
// host_price_cached.
var Families = map[string]Prices{
	"claude": {Family: "claude", In: 3, Out: 15, Cached: 0.30, CacheWrite: 3.75, Source: "default"},
	"gpt":    {Family: "gpt", In: 1.25, Out: 10, Cached: 0.125, CacheWrite: 1.25, Source: "default"},
	"gemini": {Family: "gemini", In: 1.25, Out: 10, Cached: 0.31, CacheWrite: 1.25, Source: "default"},
}

// Params are what turns counts into tokens and money.
type Params struct {
	BytesPerToken float64 `json:"bytes_per_token"`
	// TurnsLeft is how many more turns the host's session will take: each re-reads what
	// entered its context, at the cached-input price.
	TurnsLeft int64 `json:"turns_left"`
	// Context is C, the tokens every turn of the host's session re-reads, and ContextSource
	// where it came from: "call" (the host said), "transcript" (its own usage log),
	// "operator" (a setting) or "default" (DefaultContext).
	Context       int64  `json:"context_tokens"`
	ContextSource string `json:"context_source"`
	Prices        Prices `json:"prices"`
}

// DefaultContext is C where nothing better is known: 44,000 tokens, the low end of the 44k to
// 85k a frontier coding session re-reads on every turn before it has gathered anything (its
// system prompt, tools and instructions), as the Portulan pack's cost model puts the floor.
const DefaultContext = 44000

// Defaults are the documented defaults: 4 bytes a token, 10 turns left, a context of
// DefaultContext, the claude family.
func Defaults() Params {
	return Params{BytesPerToken: 4, TurnsLeft: 10, Context: DefaultContext, ContextSource: "default", Prices: Families["claude"]}
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
	// Delegation is what the delegation cost the host: the result, a red run's handoff and the
	// review it reads (In), the call it writes (Out).
	Delegation Side `json:"delegation"`
	// Saved is the byte term's one-turn saving: Direct less Delegation, each way (negative: a
	// loss).
	Saved Side `json:"saved"`
	// Carried is the cached-input tokens saved over the turns left: what the job itself would
	// have put in the host's context, less what the delegation put there, once a turn.
	Carried int64 `json:"carried"`
	// The turn term: TurnsDirect the turns of the job done directly (a run that did not do
	// it leaves them as TurnsTodo), TurnsDelegated the delegation's own; TurnsSaved the
	// difference (negative: a loss), and TurnTokens those turns' re-reads of the context, at
	// the cached-input price.
	TurnsDirect    int64 `json:"turns_direct"`
	TurnsTodo      int64 `json:"turns_todo"`
	TurnsDelegated int64 `json:"turns_delegated"`
	TurnsSaved     int64 `json:"turns_saved"`
	TurnTokens     int64 `json:"turn_tokens"`
	// Net is TurnTokens + Saved.In + Saved.Out + Carried: the tokens saved, net of losses.
	Net int64 `json:"net_tokens"`
	// USDTurns prices the turn term, USDBytes the byte term (the one-turn saving and the
	// carried one), USD both.
	USDTurns float64 `json:"usd_turns"`
	USDBytes float64 `json:"usd_bytes"`
	USD      float64 `json:"usd"`
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
		e.TurnsDirect = max(parts.Turns.Direct, 0)
	} else {
		e.Todo = job
		e.TurnsTodo = max(parts.Turns.Direct, 0)
	}
	e.Delegation = Side{In: p.Tokens(parts.Result) + p.Tokens(parts.Handoff), Out: p.Tokens(parts.Call)}
	if parts.Done {
		e.Delegation.In += p.Tokens(parts.Review)
	}
	e.Saved = Side{In: e.Direct.In - e.Delegation.In, Out: e.Direct.Out - e.Delegation.Out}
	entered := e.Saved.In + e.Saved.Out
	e.Carried = mulTokens(entered, max(p.TurnsLeft, 0))
	e.TurnsDelegated = max(parts.Turns.Delegated, 0)
	e.TurnsSaved = e.TurnsDirect - e.TurnsDelegated
	e.TurnTokens = mulTokens(e.TurnsSaved, max(p.Context, 0))
	e.Net = AddTokens(AddTokens(e.TurnTokens, entered), e.Carried)
	e.USDTurns = Dollars(float64(e.TurnTokens) * p.Prices.Cached / 1e6)
	e.USDBytes = Dollars((float64(e.Saved.In)*p.Prices.In + float64(e.Saved.Out)*p.Prices.Out + float64(e.Carried)*p.Prices.Cached) / 1e6)
	e.USD = Dollars(e.USDTurns + e.USDBytes)
	return e
}

// mulTokens multiplies a signed count by a factor of at least 0, stopping at the largest or
// smallest int64 rather than wrapping.
func mulTokens(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	if a < 0 && a < math.MinInt64/b {
		return math.MinInt64
	}
	return a * b
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
func (s Summary) Receipt() string { return receiptOf(s.USD, s.Method) }

// receiptOf is the receipt's one figure: the money saved, net of losses, labelled. Money, not
// tokens, since the terms are tokens at different prices: a turn's re-read of the context at
// the cached price, a written token at five to eight times a read one.
func receiptOf(usd float64, method string) string {
	label := "est"
	if method == MethodMeasured {
		label = "measured"
	}
	sign := "+"
	if usd < 0 {
		sign, usd = "-", -usd
	}
	return fmt.Sprintf("saved=%s$%.4f(%s)", sign, usd, label)
}

// Add is the sum of two runs' sums: a workflow's own and its items'.
func (s Summary) Add(o Summary) Summary {
	return Summary{Method: s.Method, Net: AddTokens(s.Net, o.Net), USD: Dollars(s.USD + o.USD)}
}

// Summary is the estimate's sum.
func (e Estimate) Summary() Summary { return Summary{Method: e.Method, Net: e.Net, USD: e.USD} }

// Receipt is the estimate as the receipt prints it: the money saved net of losses, both terms,
// signed, labelled as an estimate.
func (e Estimate) Receipt() string { return receiptOf(e.USD, e.Method) }

// Words is the estimate for a person, one line.
func (e Estimate) Words() string {
	var b strings.Builder
	fmt.Fprintf(&b, "estimated: turns %s at a context of %d tokens (%s): %+d turns, %+dt, %s; bytes at %g a token: doing it itself %s, the delegation %s",
		e.turnWords(), e.Params.Context, e.Params.ContextSource, e.TurnsSaved, e.TurnTokens, Money(e.USDTurns),
		e.Params.BytesPerToken, sideWords(e.Direct), sideWords(e.Delegation))
	if e.Todo != (Side{}) {
		fmt.Fprintf(&b, ", still to do %s", sideWords(e.Todo))
	}
	fmt.Fprintf(&b, ": %+d in and %+d out this turn, %+d carried over %d more turns, %s; in all %+dt, %s at %s prices (%s)",
		e.Saved.In, e.Saved.Out, e.Carried, e.Params.TurnsLeft, Money(e.USDBytes), e.Net, Money(e.USD), e.Params.Prices.Family, e.Params.Prices.Source)
	return b.String()
}

// turnWords says the turns each way: "4 direct against 1 delegated", "3 still to do, 1
// delegated".
func (e Estimate) turnWords() string {
	if e.TurnsTodo > 0 || (e.TurnsDirect == 0 && !e.Parts.Done) {
		return fmt.Sprintf("%d still to do, %d delegated", e.TurnsTodo, e.TurnsDelegated)
	}
	return fmt.Sprintf("%d direct against %d delegated", e.TurnsDirect, e.TurnsDelegated)
}

// Money is a signed sum of US dollars for a person: +$0.0420, -$0.0010.
func Money(usd float64) string {
	if usd < 0 {
		return fmt.Sprintf("-$%.4f", -usd)
	}
	return fmt.Sprintf("+$%.4f", usd)
}

func sideWords(s Side) string { return fmt.Sprintf("%dt in + %dt out", s.In, s.Out) }
