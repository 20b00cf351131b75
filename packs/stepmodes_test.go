package packs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The workflow checks ask the registry which modes a step runs and which of them edit; the modes'
// packages sit above this one, so its tests register stand-ins of the same names.
func init() {
	RegisterMode(ModeSpec{Name: "transform", Step: true, EditsInPlace: true})
	RegisterMode(ModeSpec{Name: "summarize", Step: true})
	RegisterMode(ModeSpec{Name: "dedup", Step: true})
}

// A workflow with a step of a mode this locum does not register may or may not edit: the check
// of its verify waits for the run, which refuses the step.
func TestWorkflowOfAnUnregisteredModeIsNotJudgedForEdits(t *testing.T) {
	for _, verify := range []string{"", "go test ./..."} {
		wf := Workflow{Verify: verify, Steps: []WorkflowStep{{Name: "a", Mode: "not-registered"}}}
		assert.Empty(t, workflowProblems("p.json", map[string]Workflow{"w": wf}), verify)
	}
	assert.False(t, StepEdits("not-registered"))
	assert.Equal(t, []string{"dedup", "summarize", "transform"}, StepModes())
}
