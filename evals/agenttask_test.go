package evals

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAgentPredicate(t *testing.T) {
	task := AgentTask()
	assert.Len(t, task.Fingerprint(), 64)
	assert.Contains(t, task.Prompt, "-- shapes/report.go --")
	ok := good(t, "agent")
	assert.True(t, gradeAgent(ok).Passed, gradeAgent(ok).Evidence)
	assert.True(t, gradeAgent("```\n"+ok+"```").Passed, "a fenced answer is read")
	assert.True(t, gradeAgent(strings.Replace(ok, "w * h * scale", "scale * (w * h)", 1)).Passed, "the product in any order")
	cases := []struct {
		name, answer, want string
	}{
		{"fixture as given", agentFixture, "Area's parameters are (w, h), want (w, h, scale)"},
		{"one call left", strings.Replace(ok, "Area(6, 6, 1)", "Area(6, 6)", 1), "2 of 3 calls of Area pass 1"},
		{"scale 2", strings.Replace(ok, "Area(2, 3, 1)", "Area(2, 3, 2)", 1), "2 of 3 calls"},
		{"not scaled", strings.Replace(ok, "w * h * scale", "w * h", 1), "does not return w * h * scale"},
		{"scale added", strings.Replace(ok, "w * h * scale", "w*h + scale", 1), "does not return w * h * scale"},
		{"other change", strings.Replace(ok, `"%d %d %d"`, `"%d, %d, %d"`, 1), "report.go changed besides the calls"},
		{"extra declaration", strings.Replace(ok, "-- shapes/report.go --", "func Other() {}\n-- shapes/report.go --", 1), "area.go changed besides Area's scale"},
		{"another package", strings.Replace(ok, "-- shapes/area.go --\npackage shapes", "-- shapes/area.go --\npackage other", 1), "area.go changed besides Area's scale"},
		{"result type any", strings.Replace(ok, "scale int) int {", "scale int) any {", 1), "area.go changed besides Area's scale"},
		{"a type parameter", strings.Replace(ok, "func Area(", "func Area[T any](", 1), "area.go changed besides Area's scale"},
		{"one file", strings.SplitAfter(ok, "}\n")[0], "has 1 of the 2 files"},
		{"another file", ok + "-- main.go --\npackage main\n", `a file "main.go"`},
		{"not Go", strings.Replace(ok, "func Area(", "func Area(((", 1), "does not parse as Go"},
		{"prose", "Add scale to Area and pass 1 everywhere.", "has 0 of the 2 files"},
		{"float scale", strings.Replace(ok, "w, h, scale int", "w, h int, scale float64", 1), "not all int"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gradeAgent(tc.answer)
			assert.False(t, g.Passed)
			assert.Contains(t, strings.Join(g.Evidence, "\n"), tc.want)
		})
	}
}

func TestSplitTxtar(t *testing.T) {
	for _, tt := range []struct {
		name, text string
		want       []txtarFile
	}{
		{"two files and a comment", "note\n-- a.go --\npackage a\n-- b.go --\r\npackage b\r\n",
			[]txtarFile{{"a.go", []byte("package a\n")}, {"b.go", []byte("package b\r\n")}}},
		{"a marker with no name is text", "-- --\n--  --\n-- a --\nx", []txtarFile{{"a", []byte("x")}}},
		{"no marker", "package a\n", nil},
		{"an empty file", "-- a --\n-- b --\nx\n", []txtarFile{{"a", nil}, {"b", []byte("x\n")}}},
		{"a marker without its end", "-- a\nx\n", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, splitTxtar(tt.text))
		})
	}
}
