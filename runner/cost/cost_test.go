package cost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOf holds the estimate's two terms over modes, outcomes and contexts: the turns each way
// at C tokens a turn and the cached price, and the bytes each way, carried over the turns left.
func TestOf(t *testing.T) {
	p := Defaults() // 4 bytes a token, 10 turns left, C = 44,000, claude's $3 in, $15 out, $0.30 cached
	small := p
	small.Context = 10000
	for _, tc := range []struct {
		name                  string
		parts                 Parts
		p                     Params
		direct, todo, deleg   Side
		saved                 Side
		carried               int64
		turnsSaved, turnToks  int64
		net                   int64
		usdTurns, usdBytes    float64
		directTurns, todoTurn int64
	}{
		{"a kept transform: read, edit and verify done directly, against one call",
			Parts{Read: 150, Write: 60, Call: 120, Result: 240, Review: 60, Turns: Turns{Direct: 3, Delegated: 1}, Done: true}, p,
			Side{38, 15}, Side{}, Side{75, 30}, Side{-37, -15}, -520, 2, 88000, 88000 - 52 - 520,
			88000 * 0.3 / 1e6, (-37*3 - 15*15 - 520*0.3) / 1e6, 3, 0},
		{"the same edit after two red rounds saved the host two more edits and verifies",
			Parts{Read: 150, Write: 60, Call: 120, Result: 240, Review: 60, Turns: Turns{Direct: 7, Delegated: 1}, Done: true}, p,
			Side{38, 15}, Side{}, Side{75, 30}, Side{-37, -15}, -520, 6, 264000, 264000 - 52 - 520,
			264000 * 0.3 / 1e6, (-37*3 - 15*15 - 520*0.3) / 1e6, 7, 0},
		{"a kept transform in a small context saves less",
			Parts{Read: 150, Write: 60, Call: 120, Result: 240, Review: 60, Turns: Turns{Direct: 3, Delegated: 1}, Done: true}, small,
			Side{38, 15}, Side{}, Side{75, 30}, Side{-37, -15}, -520, 2, 20000, 20000 - 52 - 520,
			20000 * 0.3 / 1e6, (-37*3 - 15*15 - 520*0.3) / 1e6, 3, 0},
		{"a red run cost its call's turn and left the job to do",
			Parts{Read: 150, Write: 150, Call: 120, Result: 400, Review: 90, Turns: Turns{Direct: 3, Delegated: 1}}, p,
			Side{}, Side{38, 38}, Side{100, 30}, Side{-100, -30}, -1300, -1, -44000, -44000 - 130 - 1300,
			-44000 * 0.3 / 1e6, (-100*3 - 30*15 - 1300*0.3) / 1e6, 0, 3},
		{"a digest: one turn each way, it pays on the span kept out of the context",
			Parts{Read: 12000, Call: 100, Result: 1100, Turns: Turns{Direct: 1, Delegated: 1}, Done: true}, p,
			Side{3000, 0}, Side{}, Side{275, 25}, Side{2725, -25}, 27000, 0, 0, 2700 + 27000,
			0, (2725*3 - 25*15 + 27000*0.3) / 1e6, 1, 0},
		{"nothing measured costs nothing", Parts{}, p, Side{}, Side{}, Side{}, Side{}, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Of(tc.parts, tc.p)
			assert.Equal(t, MethodEstimated, e.Method)
			assert.Equal(t, tc.direct, e.Direct, "direct")
			assert.Equal(t, tc.todo, e.Todo, "todo")
			assert.Equal(t, tc.deleg, e.Delegation, "delegation")
			assert.Equal(t, tc.saved, e.Saved, "saved")
			assert.Equal(t, tc.carried, e.Carried, "carried")
			assert.Equal(t, tc.directTurns, e.TurnsDirect, "direct turns")
			assert.Equal(t, tc.todoTurn, e.TurnsTodo, "turns still to do")
			assert.Equal(t, tc.turnsSaved, e.TurnsSaved, "turns saved")
			assert.Equal(t, tc.turnToks, e.TurnTokens, "turn tokens")
			assert.Equal(t, tc.net, e.Net, "net")
			assert.InDelta(t, tc.usdTurns, e.USDTurns, 1e-6)
			assert.InDelta(t, tc.usdBytes, e.USDBytes, 1e-6)
			assert.InDelta(t, e.USDTurns+e.USDBytes, e.USD, 1e-6)
		})
	}
}

func TestReceiptIsTheMoneyLabelled(t *testing.T) {
	p := Defaults()
	p.TurnsLeft = 0
	e := Of(Parts{Read: 40000, Call: 60, Result: 900, Turns: Turns{Direct: 1, Delegated: 1}, Done: true}, p)
	assert.Equal(t, int64(0), e.Carried)
	assert.Equal(t, e.Saved.In+e.Saved.Out, e.Net)
	assert.Equal(t, "saved=+$0.0291(est)", e.Receipt())
	red := Of(Parts{Read: 150, Call: 120, Result: 400, Turns: Turns{Direct: 3, Delegated: 1}}, Defaults())
	assert.Regexp(t, `^saved=-\$0\.0[0-9]{3}\(est\)$`, red.Receipt())
	assert.Equal(t, "saved=+$0.0100(measured)", Summary{Method: MethodMeasured, USD: 0.01}.Receipt())
}

func TestWordsShowTheTermsApart(t *testing.T) {
	e := Of(Parts{Read: 150, Write: 60, Call: 120, Result: 240, Review: 60, Turns: Turns{Direct: 3, Delegated: 1}, Done: true}, Defaults())
	w := e.Words()
	assert.Contains(t, w, "turns 3 direct against 1 delegated at a context of 44000 tokens (default): +2 turns, +88000t, +$0.0264")
	assert.Contains(t, w, "doing it itself 38t in + 15t out, the delegation 75t in + 30t out")
	red := Of(Parts{Read: 150, Call: 120, Result: 400, Turns: Turns{Direct: 3, Delegated: 1}}, Defaults())
	assert.Contains(t, red.Words(), "turns 3 still to do, 1 delegated")
}

func TestAddTokensSaturates(t *testing.T) {
	assert.Equal(t, int64(math.MaxInt64), AddTokens(math.MaxInt64-1, 5))
	assert.Equal(t, int64(math.MinInt64), AddTokens(math.MinInt64+1, -5))
	assert.Equal(t, int64(-3), AddTokens(2, -5))
	assert.Equal(t, int64(math.MaxInt64), mulTokens(math.MaxInt64/2, 3))
	assert.Equal(t, int64(math.MinInt64), mulTokens(math.MinInt64/2, 3))
	assert.Equal(t, int64(-6), mulTokens(-2, 3))
}

func TestTokensRoundsUpAndSurvivesABadRatio(t *testing.T) {
	assert.Equal(t, int64(0), Params{BytesPerToken: 4}.Tokens(0))
	assert.Equal(t, int64(1), Params{BytesPerToken: 4}.Tokens(1))
	assert.Equal(t, int64(3), Params{BytesPerToken: 2.5}.Tokens(6))
	assert.Equal(t, int64(2), Params{}.Tokens(5), "no ratio: the documented 4 bytes a token")
}

// TestBreakEvenFollowsTheTurns holds the break-even to the turn model over keep rates and
// contexts: a kept edit saves its direct turns, every run costs its call's.
func TestBreakEvenFollowsTheTurns(t *testing.T) {
	p := Defaults()
	for _, tc := range []struct {
		name    string
		h       History
		context int64
		lines   int64
		ok      bool
	}{
		{"the prior: one in two kept pays at any size, since a kept edit saves two turns", EditPrior(), DefaultContext, 1, true},
		{"one in five kept: the turns do not pay, the span must", History{Runs: 5, Kept: 1, CallBytes: 118, ResultBytes: 348, WritePerRead: 0.4, ReviewPerRead: 0.4, BytesPerLine: 30, DirectTurns: 3, DelegatedTurns: 1}, DefaultContext, 391, true},
		{"one in five kept in a small context: the span's bytes weigh more", History{Runs: 5, Kept: 1, CallBytes: 118, ResultBytes: 348, WritePerRead: 0.4, ReviewPerRead: 0.4, BytesPerLine: 30, DirectTurns: 3, DelegatedTurns: 1}, 5000, 103, true},
		{"a role that keeps nothing pays at no size", History{Runs: 5, Kept: 0, CallBytes: 100, ResultBytes: 100, BytesPerLine: 30, DirectTurns: 3, DelegatedTurns: 1}, DefaultContext, 0, false},
		{"a digest at 80%: one turn each way, so the span pays", ReadPrior(8, 1000), DefaultContext, 134, true},
		{"a kept run that costs more to review than it saves, and no turn saved", History{Runs: 5, Kept: 5, CallBytes: 100, ResultBytes: 100, ReviewPerRead: 1.5, BytesPerLine: 30, DirectTurns: 1, DelegatedTurns: 1}, DefaultContext, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			q.Context = tc.context
			lines, ok := tc.h.PaysAbove(q)
			require.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.lines, lines)
			if ok {
				assert.GreaterOrEqual(t, tc.h.Expect(lines, q), 0.0, "it pays at its break-even")
				if lines > 1 {
					assert.Less(t, tc.h.Expect(lines-1, q), 0.0, "and not a line below it")
				}
			}
		})
	}
	rate, ok := EditPrior().MinKeepRate(p)
	require.True(t, ok)
	assert.InDelta(t, 0.36, rate, 0.01, "a transform pays at any size above about a third kept: one call against three turns")
	_, ok = ReadPrior(8, 1000).MinKeepRate(p)
	assert.False(t, ok, "a digest of one line never pays: it saves no turn")

	// A cheaper output price moves a size break-even up: writing the edit itself costs the host less.
	h := History{Runs: 5, Kept: 1, CallBytes: 118, ResultBytes: 348, WritePerRead: 0.4, ReviewPerRead: 0.4, BytesPerLine: 30, DirectTurns: 3, DelegatedTurns: 1}
	cheap := p
	cheap.Prices.Out = 3
	more, _ := h.PaysAbove(cheap)
	assert.Greater(t, more, int64(391))
}

func TestRuleWords(t *testing.T) {
	n, one := int64(21), int64(1)
	rate := 0.36
	r := Rule{Mode: "transform", Role: "code", Unit: "span lines", PaysAbove: &n, KeepRate: 0.5, History: History{Basis: "prior"}}
	assert.Equal(t, "transform for role code pays from 21 span lines at a 50% keep rate (prior)", r.Words())
	r.PaysAbove, r.MinKeepRate = &one, &rate
	assert.Equal(t, "transform for role code pays at any size at a 50% keep rate (prior); at any size above a 36% keep rate", r.Words())
	r.PaysAbove, r.MinKeepRate, r.Stop, r.Why, r.KeepRate = nil, nil, true, "its last 5 runs kept 0", 0
	assert.Equal(t, "transform for role code never pays at a 0% keep rate (prior); stopped: its last 5 runs kept 0", r.Words())
	r.PaysAbove, r.StopBelow = &n, &n
	assert.Contains(t, r.Words(), "pays from 21 span lines at a 0% keep rate (prior); stopped below 21 span lines: its last 5 runs kept 0")
}
