package rails

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A budget refusal names its settings in the words of the front end that reports it.
func TestBudgetErrorWords(t *testing.T) {
	e := &BudgetError{What: "the prompt", Size: 411, Limit: 100}
	assert.Equal(t, "the prompt is 411 bytes, over the input budget of 100 bytes (--max-input-bytes); narrow it with --lines A-B, or raise the budget only as far as the model's context holds", e.Error())
	tool := func(s string) string { return "`" + s + "`" }
	assert.Equal(t, "the prompt is 411 bytes, over the input budget of 100 bytes (`max_input_bytes`); narrow it with `lines` A-B, or raise the budget only as far as the model's context holds", e.Words(tool))
	unknown := &BudgetError{What: "a.md", Size: -1, Limit: 5, Remedy: "shorten the task"}
	assert.NotContains(t, unknown.Words(tool), "--")
	assert.Equal(t, "--max-output-tokens", FlagName("max_output_tokens"))
}
