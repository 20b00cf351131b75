package verify

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

// exampleWorkspace copies examples/scripted-ab, a workspace with a signed record, its register
// and the routing it earned, into a folder of the test's own.
func exampleWorkspace(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.CopyFS(root, os.DirFS(filepath.Join("..", "examples", "scripted-ab"))))
	return root
}

// abInput composes the workspace at root as the CLI does.
func abInput(t *testing.T, root string) ABInput {
	t.Helper()
	v, err := schema.New()
	require.NoError(t, err)
	c, err := packs.Compose(v, root)
	require.NoError(t, err)
	require.NotNil(t, c.Workspace)
	return ABInput{Validator: v, Root: root, Trust: c.Workspace.Trust.Keys, Roles: c.Roles()}
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), old)
	require.NoError(t, os.WriteFile(path, []byte(strings.Replace(string(data), old, new, 1)), 0o644))
}

func TestABRunFoldsEveryCheck(t *testing.T) {
	green := Check{Name: "base/green", Run: func(context.Context, *Env) error { return nil }}
	red := Check{Name: "base/red", Run: func(context.Context, *Env) error { return errors.New("a rail broke") }}
	record := filepath.Join(evalsDir, "local-worker.json")
	cases := []struct {
		name     string
		baseline []Check
		edit     func(t *testing.T, root string)
		want     int
		// lines are regular expressions that must match the report, in this order.
		lines []string
	}{
		{
			name: "the example holds", baseline: []Check{green},
			want:  0,
			lines: []string{`ok base/green`, `ok record/local-worker \(`, `ok routing \(`, `ab-run: 3 checks, 0 red, 0 could not run`},
		},
		{
			name: "a red baseline before greens stays red", baseline: []Check{red, green},
			want:  1,
			lines: []string{`FAIL base/red \(.*\): a rail broke`, `ok base/green`, `ok record/local-worker`, `ok routing`, `ab-run: 4 checks, 1 red, 0 could not run`},
		},
		{
			name: "a routing edited by hand is red", baseline: []Check{green},
			edit: func(t *testing.T, root string) {
				editFile(t, filepath.Join(root, ".locum", "routing.json"), `"enabled": true`, `"enabled": false`)
			},
			want: 1,
			lines: []string{`ok record/local-worker`, `FAIL routing \(.*\): 2 findings`,
				`    FAIL .locum/routing.json cannot be trusted: its signature does not match`,
				`    FAIL .locum/routing.json routes role agent as enabled=false .*; the record derives enabled=true`},
		},
		{
			name: "the record the routing names is missing", baseline: []Check{green},
			edit: func(t *testing.T, root string) { require.NoError(t, os.Remove(filepath.Join(root, record))) },
			want: 2,
			lines: []string{`ok records`, `    note no A/B record under .locum/evals/ab`,
				`ERROR routing \(.*\): could not run: .locum/routing.json names .locum/evals/ab/local-worker.json: no A/B record at `},
		},
		{
			name: "a red record before a green one and the routing stays red", baseline: []Check{green},
			edit: func(t *testing.T, root string) { flippedCopy(t, root) },
			want: 1,
			lines: []string{`FAIL record/a-flipped \(.*\): [0-9]+ findings`, `    FAIL turn L/code/1 regrades as passed=true, recorded passed=false`,
				`ok record/local-worker`, `ok routing`, `ab-run: 4 checks, 1 red, 0 could not run`},
		},
		{
			name: "could not run outranks red", baseline: []Check{red},
			edit: func(t *testing.T, root string) {
				flippedCopy(t, root)
				require.NoError(t, os.Remove(filepath.Join(root, record)))
			},
			want:  2,
			lines: []string{`FAIL base/red`, `FAIL record/a-flipped`, `ERROR routing`, `ab-run: 3 checks, 2 red, 1 could not run`},
		},
		{
			name: "nothing shipped checks the baseline and says so", baseline: []Check{green},
			edit: func(t *testing.T, root string) {
				require.NoError(t, os.RemoveAll(filepath.Join(root, evalsDir)))
				require.NoError(t, os.Remove(filepath.Join(root, ".locum", "routing.json")))
			},
			want: 0,
			lines: []string{`ok base/green`, `ok records`, `    note no A/B record under .locum/evals/ab`,
				`ok routing`, `    note .locum/routing.json does not exist: no role routes by an A/B record here`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := exampleWorkspace(t)
			if tc.edit != nil {
				tc.edit(t, root)
			}
			var out bytes.Buffer
			rep, err := abRun(context.Background(), abInput(t, root), tc.baseline, &out)
			require.NoError(t, err)
			assert.Equal(t, tc.want, rep.ExitCode(), out.String())
			assertLinesInOrder(t, out.String(), tc.lines)
		})
	}
}

const evalsDir = ".locum/evals/ab"

// flippedCopy adds a record that sorts before the example's, one verdict flipped, with the
// example's register.
func flippedCopy(t *testing.T, root string) {
	t.Helper()
	dir := filepath.Join(root, evalsDir)
	for _, ext := range []string{".json", ".md"} {
		data, err := os.ReadFile(filepath.Join(dir, "local-worker"+ext))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "a-flipped"+ext), data, 0o644))
	}
	editFile(t, filepath.Join(dir, "a-flipped.json"), `"passed": true`, `"passed": false`)
}

// assertLinesInOrder checks that each pattern matches a whole line of out, each after the last.
func assertLinesInOrder(t *testing.T, out string, patterns []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	at := 0
	for _, p := range patterns {
		re := regexp.MustCompile(`^` + p)
		found := false
		for at < len(lines) {
			at++
			if re.MatchString(lines[at-1]) {
				found = true
				break
			}
		}
		if !assert.True(t, found, "no line matching %q after the lines before it in:\n%s", p, out) {
			return
		}
	}
}

func TestABRunRunsTheRailsOfflineChecksFirst(t *testing.T) {
	var out bytes.Buffer
	rep, err := ABRun(context.Background(), abInput(t, exampleWorkspace(t)), &out)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.ExitCode(), out.String())
	want := []string{}
	for _, c := range OfflineChecks() {
		want = append(want, `ok `+regexp.QuoteMeta(c.Name)+` \(`)
	}
	assertLinesInOrder(t, out.String(), append(want, `ok record/local-worker`, `ok routing`))
}
