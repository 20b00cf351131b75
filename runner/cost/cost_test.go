package cost

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOf(t *testing.T) {
	p := Defaults() // 4 bytes a token, 10 turns left, claude's $3 in, $15 out, $0.30 cached
	for _, tc := range []struct {
		name                 string
		parts                Parts
		direct, todo, deleg  Side
		saved                Side
		carried, net         int64
		usdOneTurn, usdTotal float64
	}{
		{"a kept edit: the host saved the edit, paid the call, the result and the review",
			Parts{Read: 150, Write: 60, Call: 120, Result: 240, Review: 60, Done: true},
			Side{38, 15}, Side{}, Side{75, 30}, Side{-37, -15}, -520, -572, (-37*3 - 15*15) / 1e6, (-37*3-15*15)/1e6 - 520*0.3/1e6},
		{"a red run saved nothing: the job is still to do, the call and the result are lost",
			Parts{Read: 150, Write: 150, Call: 120, Result: 400, Review: 90},
			Side{}, Side{38, 38}, Side{100, 30}, Side{-100, -30}, -1300, -1430, (-100*3 - 30*15) / 1e6, (-100*3-30*15)/1e6 - 1300*0.3/1e6},
		{"a digest of a large span pays on what it kept out of the host's context, turn after turn",
			Parts{Read: 12000, Call: 100, Result: 1100, Done: true},
			Side{3000, 0}, Side{}, Side{275, 25}, Side{2725, -25}, 27000, 29700, (2725*3 - 25*15) / 1e6, (2725*3-25*15)/1e6 + 27000*0.3/1e6},
		{"nothing measured costs nothing", Parts{}, Side{}, Side{}, Side{}, Side{}, 0, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := Of(tc.parts, p)
			assert.Equal(t, MethodEstimated, e.Method)
			assert.Equal(t, tc.direct, e.Direct, "direct")
			assert.Equal(t, tc.todo, e.Todo, "todo")
			assert.Equal(t, tc.deleg, e.Delegation, "delegation")
			assert.Equal(t, tc.saved, e.Saved, "saved")
			assert.Equal(t, tc.carried, e.Carried, "carried")
			assert.Equal(t, tc.net, e.Net, "net")
			assert.InDelta(t, tc.usdOneTurn, e.USDOneTurn, 1e-12)
			assert.InDelta(t, tc.usdTotal, e.USD, 1e-12)
		})
	}
}

func TestOfWithNoTurnsLeftCountsOneTurn(t *testing.T) {
	p := Defaults()
	p.TurnsLeft = 0
	e := Of(Parts{Read: 40000, Call: 60, Result: 900, Done: true}, p)
	assert.Equal(t, int64(0), e.Carried)
	assert.Equal(t, e.Saved.In+e.Saved.Out, e.Net)
	assert.Equal(t, "saved=+9760t(est)", e.Receipt())
}

func TestAddTokensSaturates(t *testing.T) {
	assert.Equal(t, int64(math.MaxInt64), AddTokens(math.MaxInt64-1, 5))
	assert.Equal(t, int64(math.MinInt64), AddTokens(math.MinInt64+1, -5))
	assert.Equal(t, int64(-3), AddTokens(2, -5))
}

func TestTokensRoundsUpAndSurvivesABadRatio(t *testing.T) {
	assert.Equal(t, int64(0), Params{BytesPerToken: 4}.Tokens(0))
	assert.Equal(t, int64(1), Params{BytesPerToken: 4}.Tokens(1))
	assert.Equal(t, int64(3), Params{BytesPerToken: 2.5}.Tokens(6))
	assert.Equal(t, int64(2), Params{}.Tokens(5), "no ratio: the documented 4 bytes a token")
}

func TestPaysAbove(t *testing.T) {
	p := Defaults()
	lines, ok := EditPrior().PaysAbove(p)
	assert.True(t, ok)
	// 975 dollars-per-million-bytes a call against 3.15 a byte of span, at a keep rate of 0.5:
	// 619 bytes, at 30 a line.
	assert.Equal(t, int64(21), lines)

	h := History{Runs: 5, Kept: 1, CallBytes: 118, ResultBytes: 348, WritePerRead: 0.4, ReviewPerRead: 0.4, BytesPerLine: 30}
	lines, ok = h.PaysAbove(p)
	assert.True(t, ok)
	assert.Equal(t, int64(66), lines, "at exactly 65 lines the run breaks even; it pays from 66")

	h.Kept = 0
	_, ok = h.PaysAbove(p)
	assert.False(t, ok, "a role that keeps nothing pays at no size")

	_, ok = History{Runs: 5, Kept: 5, CallBytes: 100, ResultBytes: 100, ReviewPerRead: 1.5, BytesPerLine: 30}.PaysAbove(p)
	assert.False(t, ok, "a kept run that costs more to review than it saves pays at no size")

	// A cheaper output price moves the break-even up: writing the edit itself costs the host less.
	cheap := p
	cheap.Prices.Out = 3
	more, _ := EditPrior().PaysAbove(cheap)
	assert.Greater(t, more, int64(21))
}

func TestRuleWords(t *testing.T) {
	n := int64(21)
	r := Rule{Mode: "transform", Role: "code", Unit: "span lines", PaysAbove: &n, KeepRate: 0.5, History: History{Basis: "prior"}}
	assert.Equal(t, "transform for role code pays from 21 span lines at a 50% keep rate (prior)", r.Words())
	r.PaysAbove, r.Stop, r.Why, r.KeepRate = nil, true, "its last 5 runs kept 0", 0
	assert.Equal(t, "transform for role code never pays at a 0% keep rate (prior); stopped: its last 5 runs kept 0", r.Words())
	r.PaysAbove, r.StopBelow = &n, &n
	assert.Contains(t, r.Words(), "pays from 21 span lines at a 0% keep rate (prior); stopped below 21 span lines: its last 5 runs kept 0")
}
