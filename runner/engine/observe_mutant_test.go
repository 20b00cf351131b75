package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMutantTextCountsTheMutantsNotTheControl(t *testing.T) {
	assert.Equal(t, "checking the verify: it runs on the kept span in a scratch copy", ProgressEvent{Stage: StageMutants, Done: 0, Total: 5}.MutantText())
	assert.Equal(t, "checking the verify: mutant 1 of 4", ProgressEvent{Stage: StageMutants, Done: 1, Total: 5}.MutantText())
	assert.Equal(t, "checking the verify: mutant 4 of 4", ProgressEvent{Stage: StageMutants, Done: 4, Total: 5}.MutantText())
}
