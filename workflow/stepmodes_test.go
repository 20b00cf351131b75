package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"

	// The modes a workflow step runs, as the binaries that run workflows link them.
	_ "github.com/locumdev/locum/runner/dedup"
	_ "github.com/locumdev/locum/runner/summarize"
	_ "github.com/locumdev/locum/runner/transform"
)

// A step's modes are the registered modes that build a step's job, each editing as it says.
func TestStepModesAreTheRegisteredOnes(t *testing.T) {
	var building []string
	for _, name := range engine.RegisteredModes() {
		m, _ := engine.LookupMode(name)
		if m.Step != nil {
			building = append(building, name)
		}
		assert.Equal(t, m.Step != nil && m.EditsInPlace, packs.StepEdits(name), name)
	}
	assert.Equal(t, building, packs.StepModes())

}

// A step's item gets the job its mode builds, and nothing for a mode no step runs.
func TestItemJobIsItsModes(t *testing.T) {
	with := map[string]string{"task": "fix it", "edit_guard": "comments"}
	vars := map[string]string{"item": "a.go#F", "file": "a.go", "symbol": "F"}
	for _, name := range packs.StepModes() {
		j, _, out, err := itemJob(packs.WorkflowStep{Name: "s", Mode: name}, with, vars, "go test")
		require.NoError(t, err, name)
		assert.Equal(t, name, j.Mode().Name)
		assert.NotNil(t, out, name)
	}
	_, _, _, err := itemJob(packs.WorkflowStep{Name: "s", Mode: Mode.Name}, with, vars, "")
	assert.Error(t, err, "a workflow is no step of a workflow")
}
