//go:build realmodel

package realmodel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
)

// task is one transform of the tier's task set: testdata/tasks/NAME.txtar holds this as JSON in
// its comment, and the files.
type task struct {
	Name        string `json:"-"`
	File        string `json:"file"`
	Lines       string `json:"lines"`
	Symbol      string `json:"symbol"`
	Verify      string `json:"verify"`
	Task        string `json:"task"`
	MaxAttempts int    `json:"max_attempts"`
	// Red is a task whose verify never passes: the rail under test is the rollback.
	Red bool `json:"red"`
	// Weak is a task whose verify checks too little to fail on a wrong edit: a kept one must say
	// so (verify_strength 0/N).
	Weak  bool `json:"weak"`
	files []txtar.File
}

func loadTasks(t *testing.T) []task {
	t.Helper()
	names, err := filepath.Glob("testdata/tasks/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	var out []task
	for _, name := range names {
		ar, err := txtar.ParseFile(name)
		require.NoError(t, err)
		var tk task
		require.NoError(t, json.Unmarshal(ar.Comment, &tk), name)
		tk.Name = strings.TrimSuffix(filepath.Base(name), ".txtar")
		tk.files = ar.Files
		out = append(out, tk)
	}
	return out
}

// materialize writes the task's files into a new directory.
func (tk task) materialize(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range tk.files {
		p := filepath.Join(dir, f.Name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, f.Data, 0o644))
	}
	return dir
}

// verify runs the task's verify in dir, as locum does (bash -c from the root), and says whether
// it exited 0.
func (tk task) verify(t *testing.T, dir string) (bool, string) {
	t.Helper()
	cmd := exec.Command("bash", "-c", tk.Verify)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// outcome is one transform's verdict, for the pass-rate table.
type outcome struct {
	task, status, detail string
	kind                 string
}

// TestTransformsOnARealModel runs every task of testdata/tasks through locum transform against
// the real model and holds the rails on each run, whatever the model does: a kept edit passes
// its verify again on the final file; a run that was not kept leaves the file byte for byte as it
// was, mode included; the receipt's token counts are the server's own usage, summed over the
// requests. It prints the pass rate, and fails when a rail breaks or when no task is kept.
func TestTransformsOnARealModel(t *testing.T) {
	s := shared
	tasks := loadTasks(t)
	var outcomes []outcome
	for _, tk := range tasks {
		t.Run(tk.Name, func(t *testing.T) {
			dir := tk.materialize(t)
			home := t.TempDir()
			target := filepath.Join(dir, tk.File)
			require.NoError(t, os.Chmod(target, 0o640))
			before, err := os.ReadFile(target)
			require.NoError(t, err)
			green, out := tk.verify(t, dir)
			require.False(t, green, "the task's verify passes before any edit, so a kept edit would prove nothing:\n%s", out)

			// No --max-output-tokens: the default reply room follows the span (twice its tokens
			// plus 256), which is what bounds a reply that runs away and keeps the tier's time in
			// hand, as it does a user's.
			args := []string{"transform", "--json", "--file", tk.File, "--verify", tk.Verify, "--model", s.model}
			if tk.Symbol != "" {
				args = append(args, "--symbol", tk.Symbol)
			}
			if tk.Lines != "" {
				args = append(args, "--lines", tk.Lines)
			}
			if tk.MaxAttempts > 0 {
				args = append(args, "--max-attempts", fmt.Sprint(tk.MaxAttempts))
			}
			if tk.Red {
				// The red run is a rail and its handoff, not a measure of the model: its one
				// request is held to a deadline, so a model that runs on cannot stall the tier.
				args = append(args, "--timeout", redTimeout.String())
			}
			others := snapshot(t, dir, tk.File)
			mark := s.chat.rec.Len()
			began := time.Now()
			r := s.locumIn(t, dir, home, append(args, tk.Task)...)
			took := time.Since(began)
			require.NotNil(t, r.result, "no result object on stdout; stderr:\n%s", r.stderr)
			attempts := int(num(r.result["attempts"]))
			s.chat.rec.WaitLen(mark + attempts)
			calls := s.chat.rec.Since(mark)
			receipt := lastLine(r.stderr)
			t.Logf("%s: %s", tk.Name, receipt)
			status, _ := r.result["status"].(string)
			if tk.Red {
				// The rail under test is the rollback: the model must have answered and its edit
				// been written and verified red, or the restore proves nothing.
				require.Equal(t, "RED", status, "a verify that never passes must end RED; stderr:\n%s", r.stderr)
				require.Equal(t, 1, r.exit)
				require.GreaterOrEqual(t, attempts, 1)
				redHandoff(t, tk, r, took)
			}
			after, err := os.ReadFile(target)
			require.NoError(t, err)
			st, err := os.Stat(target)
			require.NoError(t, err)

			switch status {
			case "OK":
				assert.Equal(t, 0, r.exit)
				assert.False(t, tk.Red, "a verify that never passes was taken as passing")
				assert.NotEqual(t, string(before), string(after), "kept, but the file is unchanged")
				ok, out := tk.verify(t, dir)
				assert.True(t, ok, "kept, but the verify fails on the final file:\n%s", out)
				// The task's verify fails before any edit (checked above): the run's own baseline
				// saw it red, so the edit is shown to have fixed it.
				assert.Equal(t, "red", r.result["baseline"], "the receipt's baseline")
				details, _ := r.result["details"].(map[string]any)
				assert.Equal(t, "fixed", details["shown"])
				// Every kept edit's verify is measured against mutants of the span; a weak one is
				// shown to be.
				strength, _ := r.result["verify_strength"].(string)
				assert.Regexp(t, `^([0-9]+/[0-9]+|\?)$`, strength, "the kept edit's verify strength")
				if tk.Weak {
					assert.Regexp(t, `^0/[0-9]+$`, strength, "a verify that checks nothing of the body passed a mutant it should not")
					assert.Contains(t, r.stderr, "cannot tell a wrong edit from a right one there: read the diff")
				}
			case "RED", "ERROR", "REFUSED":
				assert.NotEqual(t, 0, r.exit)
				assert.Equal(t, string(before), string(after), "not kept, but the file was not restored byte for byte")
			default:
				t.Fatalf("status %q; stderr:\n%s", status, r.stderr)
			}
			assert.Equal(t, os.FileMode(0o640), st.Mode().Perm(), "the file's mode changed")

			assert.Equal(t, others, snapshot(t, dir, tk.File), "a file other than %s changed", tk.File)
			assert.Len(t, calls, attempts, "locum counts %d requests, the server answered %d", attempts, len(calls))
			var in, outTok int64
			usage := true
			for _, c := range calls {
				usage = usage && c.HasUsage
				in += c.PromptTokens
				outTok += c.OutputTokens
			}
			if usage && len(calls) > 0 {
				assert.Equal(t, float64(in), num(r.result["in_tokens"]), "in_tokens against the server's prompt_tokens")
				assert.Equal(t, float64(outTok), num(r.result["out_tokens"]), "out_tokens against the server's completion_tokens")
			}
			var n int64
			var ms float64
			timings := len(calls) > 0
			for _, c := range calls {
				timings = timings && c.HasTimings
				n += c.PredictedN
				ms += c.PredictedMS
			}
			if rate, ok := r.result["rate"].(float64); ok && timings && ms > 0 {
				want := float64(n) / (ms / 1000)
				assert.InDelta(t, want, rate, 0.01*want, "rate against the server's timings (predicted_n over predicted_ms)")
			}
			kind := ""
			if e, ok := r.result["error"].(map[string]any); ok {
				kind, _ = e["kind"].(string)
			}
			outcomes = append(outcomes, outcome{task: tk.Name, status: status, detail: receipt, kind: kind})
		})
	}
	report(t, outcomes)
}

// redTimeout bounds the red task's request: a 1.5B model's reply to a short span takes seconds.
const redTimeout = 3 * time.Minute

// redHandoff holds a red run's handoff on the real model to its contract and prints it: what it
// shows and by which rule, within its bound, and, where the model's edit reached the verify, that
// edit as a diff of the span with the verify's output on it.
func redHandoff(t *testing.T, tk task, r run, took time.Duration) {
	t.Helper()
	h, ok := r.result["handoff"].(map[string]any)
	require.True(t, ok, "a red result carries a handoff; stdout:\n%s", r.stdout)
	data, err := json.Marshal(h)
	require.NoError(t, err)
	bytes := int(num(h["bytes"]))
	assert.Equal(t, len(data), bytes, "bytes is the handoff's own size")
	assert.LessOrEqual(t, bytes, engine.MaxHandoffBytes)
	assert.Equal(t, "the last attempt whose edit the verify judged", h["rule"])
	diff, hasDiff := h["diff"].(string)
	if hasDiff {
		assert.Contains(t, diff, "--- a/"+tk.File+"\n+++ b/"+tk.File+"\n")
		assert.Equal(t, true, h["verified"])
		assert.Contains(t, h["verify_tail"], "this verify never passes")
	} else {
		assert.NotEmpty(t, h["no_diff"], "a handoff with no diff says why")
	}
	pretty, err := json.MarshalIndent(h, "", "  ")
	require.NoError(t, err)
	t.Logf("%s: the red run's handoff (%d bytes, in %s):\n%s", tk.Name, bytes, took.Round(time.Millisecond), pretty)
	fmt.Fprintf(os.Stderr, "realmodel: red transform %s: handoff %d bytes (bound %d), attempt %v, diff %t, cut %v, %s\n",
		tk.Name, bytes, engine.MaxHandoffBytes, h["attempt"], hasDiff, h["cut"], took.Round(time.Millisecond))
}

// report prints the pass rate of the real tasks (the red task is a rail, not a task) and fails
// when none was kept.
func report(t *testing.T, outcomes []outcome) {
	sort.Slice(outcomes, func(i, j int) bool { return outcomes[i].task < outcomes[j].task })
	var b bytes.Buffer
	kept, real, restored := 0, 0, 0
	for _, o := range outcomes {
		fmt.Fprintf(&b, "  %-22s %-6s %s\n", o.task, o.status, o.detail)
		if o.status != "OK" {
			restored++
		}
		if strings.HasPrefix(o.task, "red-") {
			continue
		}
		real++
		if o.status == "OK" {
			kept++
		}
	}
	t.Logf("real-model transforms: %d of %d tasks kept, %d runs rolled back\n%s", kept, real, restored, b.String())
	fmt.Fprintf(os.Stderr, "realmodel: transforms kept %d of %d tasks (%d runs rolled back)\n%s", kept, real, restored, b.String())
	if real > 0 && kept == 0 {
		t.Errorf("no task was kept: the real-model road is broken")
	}
}

// snapshot is every file under dir but skip, with its bytes, for telling that nothing else changed.
func snapshot(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" { // the Python verify's own byte code
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == skip {
			return nil
		}
		data, err := os.ReadFile(p)
		out[rel] = string(data)
		return err
	})
	require.NoError(t, err)
	return out
}

func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
