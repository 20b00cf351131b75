package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSealHoldsOnlyForWhatWasSealed(t *testing.T) {
	s := seal{key: []byte("0123456789abcdef0123456789abcdef")}
	it := ItemResult{Step: "fix", Index: 2, Item: "calc.go#F2", Status: "OK", Commit: "c0ffee", Outcome: "kept", Output: "digest"}
	got := s.item("RUN", it)
	assert.True(t, s.ok(got, s.itemFields("RUN", it)...))
	tests := []struct {
		name   string
		change func(*ItemResult)
		runID  string
	}{
		{"another run", func(*ItemResult) {}, "OTHER"},
		{"another step", func(i *ItemResult) { i.Step = "other" }, "RUN"},
		{"another index", func(i *ItemResult) { i.Index = 3 }, "RUN"},
		{"another item", func(i *ItemResult) { i.Item = "calc.go#F3" }, "RUN"},
		{"another commit", func(i *ItemResult) { i.Commit = "bad" }, "RUN"},
		{"no commit", func(i *ItemResult) { i.Commit = "" }, "RUN"},
		{"another outcome", func(i *ItemResult) { i.Outcome = "kept \x1b[2J" }, "RUN"},
		{"another output", func(i *ItemResult) { i.Output = "INJECTED" }, "RUN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changed := it
			tt.change(&changed)
			assert.False(t, s.ok(got, s.itemFields(tt.runID, changed)...))
		})
	}
	other := seal{key: []byte("another key of the same length!!")}
	assert.False(t, other.ok(got, other.itemFields("RUN", it)...), "another operator's key")
	assert.False(t, seal{}.ok("", seal{}.itemFields("RUN", it)...), "no key seals nothing")
	assert.Empty(t, s.item("RUN", ItemResult{Status: "RED"}), "a red item is run again, never sealed")

	params := map[string]string{"dir": "calc"}
	run := s.run("RUN", "fix-all", "abc", params)
	assert.True(t, s.ok(run, s.runFields("RUN", "fix-all", "abc", map[string]string{"dir": "calc"})...))
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "abd", params)...), "another base")
	assert.False(t, s.ok(run, s.runFields("RUN", "fix-all", "abc", map[string]string{"dir": "calc", "x": ""})...), "another parameter")
}
