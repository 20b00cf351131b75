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
	"github.com/locumdev/locum/runner/transform"
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

// A step's item gets the job its mode builds from the inputs it declares, each setting input an
// argument of the item's run, and nothing for a mode no step runs.
func TestItemJobIsItsModes(t *testing.T) {
	vars := map[string]string{"item": "a.go#F", "file": "a.go", "symbol": "F"}
	for _, name := range packs.StepModes() {
		with := map[string]string{}
		settings := map[string]string{}
		for _, in := range packs.StepInputs(name) {
			with[in.Name] = "value of " + in.Name
			if in.Setting != (packs.Key{}) {
				settings[in.Setting.String()] = with[in.Name]
			}
		}
		require.NotEmpty(t, with, "%s declares its inputs", name)
		j, args, out, err := itemJob(packs.WorkflowStep{Name: "s", Mode: name}, with, vars, "go test")
		require.NoError(t, err, name)
		assert.Equal(t, name, j.Mode().Name)
		assert.Equal(t, settings, orEmpty(args), name)
		assert.NotNil(t, out, name)
	}
	_, _, _, err := itemJob(packs.WorkflowStep{Name: "s", Mode: Mode.Name}, nil, vars, "")
	assert.Error(t, err, "a workflow is no step of a workflow")
}

func orEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return map[string]string{}
	}
	return m
}

// A transform item's span, task and verify come from the step's inputs, else the item's and the
// workflow's, and its edit_guard is an argument of its run.
func TestTransformItemJob(t *testing.T) {
	vars := map[string]string{"item": "a.go#F", "file": "a.go", "symbol": "F"}
	for _, c := range []struct {
		name string
		with map[string]string
		want transform.Job
		args map[string]string
	}{
		{"the item's span, the workflow's verify", map[string]string{"task": "fix it"},
			transform.Job{File: "a.go", Symbol: "F", Task: "fix it", Verify: "go test"}, nil},
		{"the step's own", map[string]string{"task": "fix it", "file": "b.go", "symbol": "G", "lines": "1-2", "verify": "make", "edit_guard": "comments"},
			transform.Job{File: "b.go", Symbol: "G", Lines: "1-2", Task: "fix it", Verify: "make"}, map[string]string{"edit_guard": "comments"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			j, args, _, err := itemJob(packs.WorkflowStep{Name: "s", Mode: transform.Mode.Name}, c.with, vars, "go test")
			require.NoError(t, err)
			assert.Equal(t, c.want, j)
			assert.Equal(t, c.args, args)
		})
	}
}

// A key the step's mode does not declare is refused before any job is built, naming the keys it
// takes; so is a Step that reads one.
func TestItemJobRefusesAnUndeclaredInput(t *testing.T) {
	_, _, _, err := itemJob(packs.WorkflowStep{Name: "s", Mode: "dedup"}, map[string]string{"dir": "notes", "task": "x"}, nil, "")
	require.Error(t, err)
	assert.Equal(t, "step s: with.task is not an input of mode dedup, which takes dir and glob", err.Error())
	status, _, _ := engine.Classify(err)
	assert.Equal(t, engine.StatusError, status)
}
