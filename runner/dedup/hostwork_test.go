package dedup

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// A screen's counterfactual is the cheaper way a host gets the same answer: reading a small
// folder, or writing the script a large one takes and reading its output, never reading every
// file of a large folder.
func TestScreenCounterfactualIsTheCheaperWay(t *testing.T) {
	p := cost.Defaults()
	turns := cost.Turns{Direct: 1, Delegated: 1}
	assert.Equal(t, engine.HostWork{Read: 800, Turns: turns}, HostWork(800, p), "a folder shorter than the script is read")
	assert.Equal(t, engine.HostWork{Write: ScriptBytes, ResultInDirect: true, Turns: turns}, HostWork(190_000, p),
		"190 KB of notes: the host writes the script, not reads the notes")
	// Where output costs what input does, reading up to the script's own size is as cheap.
	flat := p
	flat.Prices.Out = flat.Prices.In
	assert.Equal(t, int64(ScriptBytes), HostWork(ScriptBytes, flat).Read)
}
