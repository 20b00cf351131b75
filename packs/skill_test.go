package packs

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
)

// The delegate-local skill's budgets. A host lists every skill's name and description on every
// turn (skillIndexBudget: two sentences, when to use it and when not) and keeps the whole skill in
// its context from the turn it loads it on (skillBudget). The whole is what a host needs to
// delegate and read the result right, once: the server check, the break-even, one command a mode
// with its exit codes and what each asks of the host. 5,000 bytes, about 1,250 tokens, half of
// the 10.2 KB it took when it repeated each mode's manual.
const (
	skillBudget      = 5000
	skillIndexBudget = 300
)

// TestSkillWithinBudget holds the skill locum init installs to its budgets, and
// cost.SkillBytes and cost.SkillIndexBytes, which the ledger charges, to its measured sizes.
func TestSkillWithinBudget(t *testing.T) {
	data, err := fs.ReadFile(builtinFS, builtinSkill)
	require.NoError(t, err)
	front, _, ok := strings.Cut(strings.TrimPrefix(string(data), "---\n"), "\n---\n")
	require.True(t, ok && strings.HasPrefix(string(data), "---\n"), "the skill starts with front matter")
	index := 0
	for _, line := range strings.Split(front, "\n") {
		for _, key := range []string{"name: ", "description: "} {
			if v, ok := strings.CutPrefix(line, key); ok {
				index += len(v)
			}
		}
	}
	assert.LessOrEqual(t, len(data), skillBudget, "the skill is %d bytes, over its budget of %d", len(data), skillBudget)
	assert.LessOrEqual(t, index, skillIndexBudget, "the skill's name and description are %d bytes, over their budget of %d", index, skillIndexBudget)
	assert.Equal(t, len(data), cost.SkillBytes, "cost.SkillBytes must be the skill's measured size: set it to %d", len(data))
	assert.Equal(t, index, cost.SkillIndexBytes, "cost.SkillIndexBytes must be the skill's name and description: set it to %d", index)
}
