package workflow

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/packs"
)

// Only a step of two items or more, all judged by one verify, is checked before its items run:
// one item red before its edit is a bug fix's usual start, and items each judged by their own
// verify may each fix their own.
func TestSharedVerify(t *testing.T) {
	edit := packs.WorkflowStep{Name: "s", Mode: "transform"}
	shared := func(v string) itemInputs { return itemInputs{verify: v, judge: v, with: map[string]string{}} }
	own := func(v string) itemInputs { return itemInputs{judge: v, with: map[string]string{"verify": v}} }
	for _, tc := range []struct {
		name   string
		step   packs.WorkflowStep
		inputs []itemInputs
		todo   []int
		want   string
	}{
		{"two items, the workflow's verify", edit, []itemInputs{shared("go test ./a"), shared("go test ./a")}, []int{0, 1}, "go test ./a"},
		{"two items, the step's own verify", edit, []itemInputs{own("make"), own("make")}, []int{0, 1}, "make"},
		{"one item", edit, []itemInputs{shared("go test ./a")}, []int{0}, ""},
		{"one item left to run, the other resumed", edit, []itemInputs{shared("x"), shared("x")}, []int{1}, ""},
		{"each item its own verify", edit, []itemInputs{own("test a"), own("test b")}, []int{0, 1}, ""},
		{"a step that edits nothing", packs.WorkflowStep{Name: "s", Mode: "summarize"}, []itemInputs{shared(""), shared("")}, []int{0, 1}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, sharedVerify(tc.step, tc.inputs, tc.todo))
		})
	}
}
