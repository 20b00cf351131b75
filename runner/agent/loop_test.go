package agent

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// turn appends one assistant call and its tool result of n bytes, as the loop does.
func (c *conversation) turn(n int) {
	c.turns++
	c.msgs = append(c.msgs, client.Message{Role: "assistant", ToolCalls: []client.ToolCall{{ID: "c", Name: "read_file", Arguments: `{"path":"a"}`}}})
	c.folds[len(c.msgs)] = "[folded]"
	c.msgs = append(c.msgs, client.Message{Role: "tool", ToolCallID: "c", Content: strings.Repeat("x", n)})
}

// The conversation folds only when it must, folds the oldest results down to half the limit at
// once, and then grows again without touching what it sent before, so the server's prompt cache
// stays valid for many turns.
func TestFoldOnceNotEveryTurn(t *testing.T) {
	c := &conversation{folds: map[int]string{}, limit: 10000}
	c.msgs = []client.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "task"}}
	var events []engine.Event
	record := func(ev engine.Event) { events = append(events, ev) }
	folds := 0
	var prefix []client.Message
	for i := 0; i < 40; i++ {
		c.turn(1000)
		before := len(events)
		require.NoError(t, c.fit(record))
		if len(events) > before {
			folds++
			prefix = append([]client.Message(nil), c.msgs...)
			continue
		}
		// No fold this turn: everything sent before is unchanged.
		for j := range prefix {
			assert.Equal(t, prefix[j].Content, c.msgs[j].Content)
		}
		assert.LessOrEqual(t, size(c.msgs), c.limit)
	}
	// The neighbour's way for comparison: trim the oldest results to just under the limit, each
	// turn it is over.
	trim := &conversation{folds: map[int]string{}, limit: 10000}
	trim.msgs = []client.Message{{Role: "system", Content: "s"}, {Role: "user", Content: "task"}}
	trims := 0
	for i := 0; i < 40; i++ {
		trim.turn(1000)
		changed := false
		for j := range trim.msgs[:len(trim.msgs)-2] {
			if size(trim.msgs) <= trim.limit {
				break
			}
			if line := trim.folds[j]; line != "" {
				trim.msgs[j].Content, trim.folds[j], changed = line, "", true
			}
		}
		if changed {
			trims++
		}
	}
	t.Logf("%d folds in 40 turns; trimming to the limit changes the prefix on %d", folds, trims)
	assert.Greater(t, trims, 3*folds)
	// 40 turns of 1 KB each under a 10 KB limit: a handful of folds, not one per turn.
	assert.Less(t, folds, 10)
	assert.Greater(t, folds, 0)
	// The latest result is never folded.
	assert.Equal(t, 1000, len(c.msgs[len(c.msgs)-1].Content))
	assert.Equal(t, "[folded]", c.msgs[3].Content)
}

func TestFoldCannotFitIsContextExhausted(t *testing.T) {
	c := &conversation{folds: map[int]string{}, limit: 500}
	c.msgs = []client.Message{{Role: "system", Content: "s"}}
	c.turn(600)
	err := c.fit(func(engine.Event) {})
	var s *stop
	require.ErrorAs(t, err, &s)
	assert.Equal(t, StatusContextExhausted, s.status)
}

func TestStatusOfEveryEnding(t *testing.T) {
	for _, st := range Statuses {
		assert.NotEmpty(t, st)
	}
	assert.Equal(t, StatusInterrupted, statusOf(&client.SignalError{}))
	assert.Equal(t, StatusRefused, statusOf(&engine.BadInputError{Reason: "x"}))
	assert.Equal(t, StatusModelError, statusOf(&client.HTTPError{Status: 500}))
	assert.Equal(t, StatusVerifyFailed, statusOf(&engine.NoVerdictError{}))
	assert.Equal(t, StatusStalled, statusOf(red(StatusStalled, "x")))
}
