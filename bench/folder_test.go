package bench

import (
	"strings"
	"testing"

	"github.com/locumdev/locum/schema"
)

func validator(t testing.TB) *schema.Validator {
	t.Helper()
	v, err := schema.New()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const sha = "0123456789abcdef0123456789abcdef01234567"

// A bench folder's bench.json is anyone's: each problem is refused, naming its place.
func TestParseFolder(t *testing.T) {
	task := func(fields string) string {
		return `{"bench": "1", "tasks": [{"id": "a", "file": "f.go", "task": "t", "verify": "v"` + fields + `}]}`
	}
	for _, tc := range []struct {
		name, doc, refusal string
	}{
		{"a commit", task(`, "commit": "` + sha + `", "lines": "2-4"`), ""},
		{"a snapshot with an oracle", task(`, "snapshot": "repo", "symbol": "F", "oracle": {"command": "sh o.sh", "files": "hidden/a"}`), ""},
		{"neither snapshot nor commit", task(``), "missing property 'snapshot'"},
		{"both snapshot and commit", task(`, "commit": "` + sha + `", "snapshot": "repo"`), "'not' failed"},
		{"a short commit", task(`, "commit": "0123abc"`), "commit"},
		{"lines and symbol", task(`, "commit": "` + sha + `", "lines": "1-2", "symbol": "F"`), "not"},
		{"lines out of order", task(`, "commit": "` + sha + `", "lines": "9-4"`), "the span ends before it starts"},
		{"a key it does not take", task(`, "commit": "` + sha + `", "hint": "x"`), "hint"},
		{"a key named twice", `{"bench": "1", "tasks": [{"id": "a", "id": "b", "file": "f.go", "task": "t", "verify": "v", "commit": "` + sha + `"}]}`, "id"},
		{"another version", `{"bench": "2", "tasks": []}`, "bench"},
		{"an absolute file", task(`, "commit": "` + sha + `", "file": "/etc/passwd"`), "tasks/0"},
		{"a parent in the snapshot", task(`, "snapshot": "../elsewhere"`), "snapshot ../elsewhere"},
		{"a parent in the middle", task(`, "snapshot": "a/../../b"`), "snapshot a/../../b"},
		{"a git directory", task(`, "snapshot": "repo/.git"`), "names a git directory"},
		{"a git directory in the oracle's files", task(`, "commit": "` + sha + `", "oracle": {"command": "c", "files": ".git/hooks"}`), "names a git directory"},
		{"a backslash", task(`, "snapshot": "a\\b"`), "backslash"},
		{"an id twice", `{"bench": "1", "tasks": [{"id": "a", "file": "f", "task": "t", "verify": "v", "commit": "` + sha + `"}, {"id": "a", "file": "f", "task": "t", "verify": "v", "commit": "` + sha + `"}]}`, `id "a" is the id of an earlier task`},
		{"not JSON", `{"bench": "1", `, "bench.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tasks, err := ParseFolder(validator(t), "bench.json", []byte(tc.doc))
			switch {
			case tc.refusal == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refusal == "" && len(tasks) != 1:
				t.Fatalf("%d tasks, want 1", len(tasks))
			case tc.refusal != "" && err == nil:
				t.Fatalf("taken (%+v), want a refusal naming %q", tasks, tc.refusal)
			case tc.refusal != "" && !strings.Contains(err.Error(), tc.refusal):
				t.Fatalf("refusal %q does not name %q", err, tc.refusal)
			}
		})
	}
}

// Whatever bench.json holds, ParseFolder refuses it or returns tasks whose ids are unique, whose
// paths stay inside their folders and name no git directory, and whose spans are in order.
func FuzzParseFolder(f *testing.F) {
	f.Add([]byte(`{"bench": "1", "tasks": [{"id": "a", "commit": "` + sha + `", "file": "f.go", "lines": "2-4", "task": "t", "verify": "v"}]}`))
	f.Add([]byte(`{"bench": "1", "tasks": [{"id": "a", "snapshot": "s", "file": "f.go", "symbol": "F", "task": "t", "verify": "v", "oracle": {"command": "c", "files": "o"}}]}`))
	f.Add([]byte(`{"bench": "1", "tasks": [{"id": "a", "snapshot": "../s", "file": ".git/config", "task": "t", "verify": "v"}]}`))
	v := validator(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tasks, err := ParseFolder(v, "bench.json", data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, ft := range tasks {
			if seen[ft.ID] {
				t.Fatalf("id %q twice", ft.ID)
			}
			seen[ft.ID] = true
			paths := []string{ft.File, ft.Snapshot}
			if ft.Oracle != nil {
				paths = append(paths, ft.Oracle.Files)
			}
			for _, p := range paths {
				if p != "" && checkPath(p) != nil {
					t.Fatalf("path %q taken: %v", p, checkPath(p))
				}
			}
			if (ft.Snapshot == "") == (ft.Commit == "") {
				t.Fatalf("task %q has snapshot %q and commit %q", ft.ID, ft.Snapshot, ft.Commit)
			}
			if ft.Lines != "" && ft.Symbol != "" {
				t.Fatalf("task %q has lines and a symbol", ft.ID)
			}
		}
	})
}
