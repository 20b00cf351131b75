package evals

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
)

func good(t *testing.T, id string) string {
	t.Helper()
	data, err := os.ReadFile("testdata/good/" + id + ".md")
	require.NoError(t, err)
	return string(data)
}

// Each predicate fails on the fixture as given and passes on a known good answer.
func TestPredicatesSeparateFixtureFromGoodAnswer(t *testing.T) {
	for _, task := range Tasks() {
		t.Run(task.ID, func(t *testing.T) {
			fixture := task.Grade(task.Fixture)
			assert.False(t, fixture.Passed, "the fixture as given passes: %v", fixture.Evidence)
			g := task.Grade(good(t, task.ID))
			assert.True(t, g.Passed, "the good answer fails: %v", g.Evidence)
			assert.Len(t, task.Fingerprint(), 64)
		})
	}
}

func TestCodePredicate(t *testing.T) {
	ok := good(t, "code")
	cases := []struct {
		name, answer, want string
	}{
		{"one left bare", strings.Replace(ok, `fmt.Errorf("store: checking: %w", err)`, "err", 1), "1 of 3 errors are still returned bare"},
		{"%v instead of %w", strings.Replace(ok, "checking: %w", "checking: %v", 1), "2 errors wrapped"},
		{"something else changed", strings.Replace(ok, "errors.New(\"store: file too short\")", "errors.New(\"short\")", 1), "something besides the returned errors changed"},
		{"signature changed", strings.Replace(ok, "func Load(path string)", "func Load(p string)", 1), "signature changed"},
		{"not Go", "```go\nfunc Load( {\n```", "does not parse"},
		{"extra declaration", strings.Replace(ok, "```\n", "\nfunc Other() {}\n```\n", 1), "exactly one declaration"},
		{"prose only", "Wrap them with %w.", "does not parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := gradeCode(tc.answer)
			assert.False(t, g.Passed)
			assert.Contains(t, strings.Join(g.Evidence, "\n"), tc.want)
		})
	}
	bare := strings.Trim(ok, "`go\n")
	assert.True(t, gradeCode(bare).Passed, "an unfenced function is read as is")
}

func TestCodifyPredicate(t *testing.T) {
	ok := good(t, "codify")
	assert.True(t, gradeCodify("```markdown\n"+ok+"```\n").Passed, "a fenced file is read inside its fence")
	cases := map[string]string{
		"no front matter": strings.TrimPrefix(ok, "---\n"),
		"bad name":        strings.Replace(ok, "name: go-review-rules", "name: Go_Review", 1),
		"no when":         strings.Replace(ok, "description: Use before", "description: Before", 1),
		"no checks":       strings.Replace(ok, "## Checks", "## Tests", 1),
		"a rule dropped":  strings.Replace(ok, "table-driven", "good", 1),
	}
	wants := map[string]string{
		"no front matter": "no front matter",
		"bad name":        "fails locum's pack schema",
		"no when":         "does not say when",
		"no checks":       `no "## Checks" section`,
		"a rule dropped":  `"table-driven tests" is missing`,
	}
	for name, answer := range cases {
		g := gradeCodify(answer)
		assert.False(t, g.Passed, name)
		assert.Contains(t, strings.Join(g.Evidence, "\n"), wants[name], name)
	}
}

func TestHandoffPredicate(t *testing.T) {
	ok := good(t, "handoff")
	assert.False(t, gradeHandoff(ok+strings.Repeat("x", HandoffBudget)).Passed, "over the budget")
	g := gradeHandoff(strings.Replace(ok, "TestListRunsEmptyDir", "a test", 1))
	assert.False(t, g.Passed)
	assert.Contains(t, strings.Join(g.Evidence, "\n"), "drops the failing test")
	assert.False(t, gradeHandoff("").Passed)
}

// The built-in pack and the tasks agree: every task earns exactly one of the pack's roles, and a
// role names only tasks that exist, so no role can be enabled by a task nothing measures.
func TestEveryTaskEarnsABuiltinRole(t *testing.T) {
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	roles := (&packs.Composition{Packs: []*packs.Pack{p}}).Roles()
	earned := map[string]int{}
	for name, role := range roles {
		for _, id := range role.Tasks {
			_, ok := TaskByID(id)
			assert.True(t, ok, "role %s names task %s, which is not one of Tasks()", name, id)
			earned[id]++
		}
	}
	var ids []string
	for _, task := range Tasks() {
		ids = append(ids, task.ID)
		assert.Equal(t, 1, earned[task.ID], "task %s earns %d roles, want 1", task.ID, earned[task.ID])
	}
	assert.Equal(t, []string{"code", "codify", "handoff", "agent"}, ids, "the fixed order every record and screen follows")
	assert.Equal(t, []string{"agent"}, roles["agent"].Tasks)
}
