package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

// readsJob is a step's job that only records what its Step read.
type readsJob struct{ got map[string]string }

func (*readsJob) Mode() Mode         { return Mode{} }
func (*readsJob) Steps(Place) []Step { return nil }

// stepMode is a mode of this test's own whose Step reads each of its declared inputs, and also
// the key extra when it is not "".
func stepMode(name, extra string) Mode {
	inputs := []packs.StepInput{
		{Name: "file", Doc: "the file", Item: "file", Kind: packs.InputPath},
		{Name: "note", Doc: "a note"},
		{Name: "check", Doc: "the item's verify", Kind: packs.InputVerify},
		packs.SettingInput(packs.Glob),
	}
	return Mode{Name: name, Settings: []packs.Key{packs.Glob}, StepInputs: inputs,
		Step: func(it StepItem) (StepJob, error) {
			j := &readsJob{got: map[string]string{}}
			for _, in := range inputs {
				j.got[in.Name] = it.Input(in.Name)
			}
			if extra != "" {
				j.got[extra] = it.Input(extra)
			}
			return StepJob{Job: j}, nil
		}}
}

var declaringMode = stepMode("test-declaring", "")

func init() { RegisterMode(declaringMode) }

// A Step reads a declared input from the step, else from the item or the workflow's verify it
// defaults to; a setting input is an argument of the item's run.
func TestBuildStepReadsDeclaredInputs(t *testing.T) {
	vars := map[string]string{"item": "a.md", "file": "a.md"}
	for _, c := range []struct {
		name string
		with map[string]string
		want map[string]string
		args map[string]string
	}{
		{"defaults", nil,
			map[string]string{"file": "a.md", "note": "", "check": "go test", "glob": ""}, nil},
		{"the step's own", map[string]string{"file": "b.md", "note": "n", "check": "make", "glob": "*.txt"},
			map[string]string{"file": "b.md", "note": "n", "check": "make", "glob": "*.txt"}, map[string]string{"glob": "*.txt"}},
		{"an empty setting sets nothing", map[string]string{"glob": ""},
			map[string]string{"file": "a.md", "note": "", "check": "go test", "glob": ""}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			sj, err := declaringMode.BuildStep(c.with, vars, "go test")
			require.NoError(t, err)
			assert.Equal(t, c.want, sj.Job.(*readsJob).got)
			assert.Equal(t, c.args, sj.Args)
		})
	}
}

// A step's with naming a key the mode does not declare is refused, naming those it does; a Step
// that reads one fails the build, and a mode whose Step reads one is refused at registration.
func TestStepInputsNotDeclaredAreRefused(t *testing.T) {
	_, err := declaringMode.BuildStep(map[string]string{"task": "x"}, nil, "")
	require.Error(t, err)
	assert.Equal(t, "with.task is not an input of mode test-declaring, which takes file, note, check and glob", err.Error())
	var bad *BadInputError
	assert.ErrorAs(t, err, &bad)

	reading := stepMode("test-reading", "task")
	_, err = reading.BuildStep(nil, nil, "")
	var ue *UndeclaredInputError
	require.ErrorAs(t, err, &ue)
	assert.Equal(t, &UndeclaredInputError{Mode: "test-reading", Keys: []string{"task"}}, ue)
	assert.PanicsWithValue(t, "engine: mode test-reading's step reads with.task, which it does not declare in its StepInputs",
		func() { RegisterMode(reading) })
	_, registered := LookupMode(reading.Name)
	assert.False(t, registered, "nothing of a refused mode is registered")
	assert.False(t, packs.Registered(reading.Name))

	// A Step given a StepItem it did not get from BuildStep reads nothing.
	sj, err := declaringMode.Step(StepItem{})
	require.NoError(t, err)
	assert.Equal(t, map[string]string{"file": "", "note": "", "check": "", "glob": ""}, sj.Job.(*readsJob).got)
}

// Step inputs a mode could not be read by are refused at registration.
func TestRegisterModeRefusesStepInputsItCannotRead(t *testing.T) {
	step := func(StepItem) (StepJob, error) { return StepJob{}, nil }
	for _, c := range []struct {
		name string
		mode Mode
		want string
	}{
		{"inputs with no step", Mode{Name: "test-nostep", StepInputs: []packs.StepInput{{Name: "a", Doc: "a"}}},
			`packs: mode "test-nostep" declares step inputs but no step runs it`},
		{"a key twice", Mode{Name: "test-twice", Step: step, StepInputs: []packs.StepInput{{Name: "a", Doc: "a"}, {Name: "a", Doc: "b"}}},
			`packs: mode "test-twice" declares step input "a" twice`},
		{"a key no template names", Mode{Name: "test-key", Step: step, StepInputs: []packs.StepInput{{Name: "A-b", Doc: "a"}}},
			`packs: mode "test-key" declares step input "A-b": want lower-case letters, digits and _`},
		{"no doc", Mode{Name: "test-nodoc", Step: step, StepInputs: []packs.StepInput{{Name: "a"}}},
			`packs: mode "test-nodoc" declares step input "a" with no doc`},
		{"an item no list gives", Mode{Name: "test-item", Step: step, StepInputs: []packs.StepInput{{Name: "a", Doc: "a", Item: "path"}}},
			`packs: mode "test-item"'s step input "a" defaults to the item's "path", which no list gives (item, file, symbol, line)`},
		{"two verifies", Mode{Name: "test-verifies", Step: step, StepInputs: []packs.StepInput{{Name: "a", Doc: "a", Kind: packs.InputVerify}, {Name: "b", Doc: "b", Kind: packs.InputVerify}}},
			`packs: mode "test-verifies" declares 2 verify inputs; a step's items are judged by one`},
		{"a setting not taken", Mode{Name: "test-setting", Step: step, StepInputs: []packs.StepInput{packs.SettingInput(packs.Glob)}},
			`packs: mode "test-setting"'s step input "glob" sets glob, which the mode does not take`},
		{"a setting input by hand", Mode{Name: "test-byhand", Step: step, Settings: []packs.Key{packs.Glob}, StepInputs: []packs.StepInput{{Name: "files", Doc: "d", Setting: packs.Glob}}},
			`packs: mode "test-byhand"'s step input "files" sets glob: make it with SettingInput`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.PanicsWithValue(t, c.want, func() { RegisterMode(c.mode) })
		})
	}
}
