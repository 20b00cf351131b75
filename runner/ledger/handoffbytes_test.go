package ledger

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/runner/cost"
)

// TestBreakEvenReadsHandoffsAsResult counts a red run's handoff in the result bytes the
// break-even expects a run to cost the host.
func TestBreakEvenReadsHandoffsAsResult(t *testing.T) {
	runs := []Entry{
		{Mode: "transform", Status: "RED", Start: time.Now(), Parts: cost.Parts{Call: 100, Result: 300, Handoff: 500}},
		{Mode: "transform", Status: "OK", Start: time.Now(), Parts: cost.Parts{Call: 100, Result: 300, Done: true}},
	}
	assert.InDelta(t, 550.0, history(runs, cost.EditPrior()).ResultBytes, 1e-9)
}
