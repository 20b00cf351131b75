package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/internal/runtest"
)

// Every family the host_family setting accepts has its prices, and HostParams takes them: the
// settings table (below the runner) and cost.Families are two lists that must name the same.
func TestEveryHostFamilyHasPrices(t *testing.T) {
	c := &packs.Composition{}
	for _, family := range []string{"claude", "gemini", "gpt"} {
		s, err := c.Resolve("", nil, map[string]string{"host-family": family})
		require.NoError(t, err, family)
		want, ok := cost.Families[family]
		require.True(t, ok, "cost.Families has no %s", family)
		assert.Equal(t, want, HostParams(s).Prices, family)
	}
	_, err := c.Resolve("", nil, map[string]string{"host-family": "other"})
	assert.ErrorContains(t, err, "one of claude, gemini, gpt")
	assert.Len(t, cost.Families, 3, "a family priced in cost.Families that the setting refuses")

	s, err := c.Resolve("", nil, map[string]string{"host-family": "gpt", "host-price-out": "12.5", "host-bytes-per-token": "3.5"})
	require.NoError(t, err)
	p := HostParams(s)
	assert.Equal(t, 12.5, p.Prices.Out)
	assert.Equal(t, cost.Families["gpt"].In, p.Prices.In, "an unpriced side keeps the family's price")
	assert.Equal(t, "operator", p.Prices.Source)
	assert.Equal(t, 3.5, p.BytesPerToken)
}

// The result is measured once, with a provisional estimate in place: what the journal records is
// what the host read to within the width of the figures that changed, and the parts the run
// reported are the journal's.
func TestHostCostMeasuresTheResultOnce(t *testing.T) {
	measured := 0
	host := &HostSide{CallBytes: 120, ResultBytes: func(res *Result) int64 {
		measured++
		return int64(len(res.ShortReceipt()) + 400)
	}}
	spec := RunSpec{Mode: "transform", JournalPath: filepath.Join(t.TempDir(), "run.jsonl"), Host: host}
	res := Execute(context.Background(), spec, []Step{{Name: "work", Run: func(_ context.Context, r *Run) error {
		r.HostWork(HostWork{Read: 150, Write: 60, Review: 40, ReviewInResult: true, Turns: cost.Turns{Direct: 3, Delegated: 1}})
		return nil
	}}})
	require.NotNil(t, res.Host)
	assert.Equal(t, 1, measured, "one render of the result, however large it is")
	final := int64(len(res.ShortReceipt())+400) - 40
	assert.InDelta(t, final, res.Host.Parts.Result, 3, "within the width of the figures that changed")
	assert.Equal(t, cost.Parts{Read: 150, Write: 60, Call: 120, Result: res.Host.Parts.Result, Review: 40, Turns: cost.Turns{Direct: 3, Delegated: 1}, Done: true}, res.Host.Parts)
	assert.Equal(t, res.Host.Net, res.HostSaved.Net)
	assert.Contains(t, res.ShortReceipt(), res.Host.Receipt())
}

// Every call is a turn of the host's, whatever became of it; a workflow's item shares its
// workflow's call and counts none; a context the call gave may lower the gate's, never raise it.
func TestHostTurns(t *testing.T) {
	host := &HostSide{CallBytes: 100, ResultBytes: func(*Result) int64 { return 200 }}
	run := func(spec RunSpec, w HostWork) *Result {
		spec.Mode, spec.JournalPath, spec.Host = "transform", filepath.Join(t.TempDir(), "run.jsonl"), host
		return Execute(context.Background(), spec, []Step{{Name: "work", Run: func(_ context.Context, r *Run) error {
			r.HostWork(w)
			return nil
		}}})
	}
	res := run(RunSpec{}, HostWork{})
	assert.Equal(t, cost.Turns{Delegated: 1}, res.Host.Parts.Turns, "a call the mode counted no turns of is still one")
	res = run(RunSpec{Parent: &ParentRun{Run: "20260101T000000Z-000000", Step: "s", Item: "a.go"}}, HostWork{Turns: cost.Turns{Direct: 3, Delegated: 1}})
	assert.Equal(t, cost.Turns{}, res.Host.Parts.Turns, "an item's turns are its workflow's")
}

func TestGateParamsNeverRaiseTheContext(t *testing.T) {
	runtest.StandIn("transform")
	builtin, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{builtin}}
	for _, tc := range []struct {
		args    map[string]string
		flags   map[string]string
		context int64
		source  string
		gate    int64
	}{
		{nil, nil, cost.DefaultContext, "default", cost.DefaultContext},
		{map[string]string{"host_context_tokens": "90000"}, nil, 90000, "call", cost.DefaultContext},
		{map[string]string{"host_context_tokens": "20000"}, nil, 20000, "call", 20000},
		{nil, map[string]string{"host-context-tokens": "90000"}, 90000, "operator", 90000},
	} {
		s, err := c.ResolveCall("transform", nil, tc.flags, tc.args)
		require.NoError(t, err)
		p := HostParams(s)
		assert.Equal(t, tc.context, p.Context)
		assert.Equal(t, tc.source, p.ContextSource)
		assert.Equal(t, tc.gate, GateParams(s).Context)
	}
	s, err := c.ResolveCall("transform", nil, nil, map[string]string{"host_turns_left": "500"})
	require.NoError(t, err)
	assert.Equal(t, int64(500), HostParams(s).TurnsLeft)
	assert.Equal(t, int64(10), GateParams(s).TurnsLeft, "a call's turns left may lower the gate's, never raise them")
}
