package packs

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Which settings a mode takes, which modes a workflow step runs and which of them edit are the
// registry's; the modes' packages sit above this one, so its tests register stand-ins of the
// contract's modes. They are fixtures of these tests alone: the settings schema is generated from
// the modes' own registrations (internal/gen/packschema).
func init() {
	span := []StepInput{{Name: "file", Doc: "the file", Item: "file", Kind: InputPath}, {Name: "lines", Doc: "the lines"}, {Name: "symbol", Doc: "the declaration", Item: "symbol"}}
	RegisterMode(ModeSpec{Name: "transform", Step: true, EditsInPlace: true, Settings: slices.Concat(ChatSettings, VerifySettings, HostSettings,
		[]Key{RoleSetting, MaxAttempts, EditFormat, EditGuard, Mutants, ExpectRed, NoBaseline, HostHoldsSpan, DelegateWhen}),
		StepInputs: slices.Concat(span, []StepInput{{Name: "task", Doc: "the task"}, {Name: "verify", Doc: "the verify", Kind: InputVerify}, SettingInput(EditGuard)})})
	RegisterMode(ModeSpec{Name: "summarize", Step: true, Settings: slices.Concat(ChatSettings, HostSettings, []Key{RoleSetting, MaxWords}), StepInputs: span})
	RegisterMode(ModeSpec{Name: "dedup", Step: true, Settings: slices.Concat(HostSettings,
		[]Key{EmbedModel, Threshold, Method, Exact, BatchSize, Glob, CacheMaxMiB}),
		StepInputs: []StepInput{{Name: "dir", Doc: "the folder", Kind: InputPath}, SettingInput(Glob)}})
	RegisterMode(ModeSpec{Name: "eval", Settings: slices.Concat(ChatSettings, []Key{K})})
	RegisterMode(ModeSpec{Name: "agent", Settings: slices.Concat(ChatSettings, VerifySettings, HostSettings,
		[]Key{RoleSetting, ExpectRed, NoBaseline, MaxTurns, VerifyRounds, StallTurns})})
	RegisterMode(ModeSpec{Name: "workflow", Settings: slices.Concat(VerifySettings, HostSettings, []Key{Mutants, DelegateWhen, Jobs, Servers})})
	RegisterMode(ModeSpec{Name: "verify-check", Settings: slices.Concat(VerifySettings, HostSettings, []Key{Mutants})})
	RegisterMode(ModeSpec{Name: "bench", Settings: slices.Concat(VerifySettings, HostSettings, []Key{Jobs, Servers})})
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
