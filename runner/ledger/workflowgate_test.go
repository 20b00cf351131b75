package ledger

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/runner/cost"
)

// A workflow's break-even is the call's: the files its items touch (read and edited directly,
// the verify run once) against one call, the review of its branch and its accept, and the
// edits' bytes its kept items spare the host.
func TestWorkflowCall(t *testing.T) {
	p := cost.Defaults()
	edit := cost.EditPrior()
	for _, tc := range []struct {
		name         string
		h            cost.History
		edits        bool
		items, files int
		pays         bool
	}{
		{"one declaration of one file loses: two turns direct, three delegated", edit, true, 1, 1, false},
		{"eight declarations of one file pay on the edits they spare", edit, true, 8, 1, true},
		{"one item a file over five files pays on the turns", edit, true, 5, 5, true},
		{"a keep rate of zero never pays", cost.History{Runs: 10, Kept: 0, CallBytes: 150, BytesPerLine: 30, DirectTurns: 3, DelegatedTurns: 1}, true, 20, 10, false},
		{"digests of ten files pay on what they keep out of the context", cost.ReadPrior(8, 1000), false, 10, 10, true},
		{"no items is no call", edit, true, 0, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			usd, words := WorkflowCall(tc.h, tc.edits, tc.items, tc.files, itemSpanLines, p)
			assert.Equal(t, tc.pays, usd >= 0, words)
		})
	}
	err := WorkflowGate("", nil, "transform", "", "m", true, 1, 1, p)
	assert.ErrorContains(t, err, "1 item over 1 file at a 50% keep rate")
	assert.NoError(t, WorkflowGate("", nil, "transform", "", "m", true, 5, 5, p))
	assert.NoError(t, WorkflowGate("", nil, "agent", "", "m", true, 1, 1, p), "a mode with no prior has no break-even")
}
