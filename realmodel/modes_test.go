//go:build realmodel

package realmodel

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// claim is one claim of a digest, as summarize --json gives it.
type claim struct {
	Text    string `json:"text"`
	Lines   [2]int `json:"lines"`
	Quote   string `json:"quote"`
	Verdict string `json:"verdict"`
}

// TestSummarizeOnARealModel holds the evidence gate on real digests of real files (testdata/digest:
// a Python module, a Go package (mutate/testdata/list.go) and a README from public projects, licences beside them) and of
// the design note: every claim locum calls supported cites at most 8 lines inside the file whose
// text is its quote, and is not the instruction's example; exit 0 only with a supported claim,
// exit 1 with none. Each file's outcome is printed for the closing figures.
func TestSummarizeOnARealModel(t *testing.T) {
	s := shared
	for _, tc := range []struct{ file, lines string }{
		{"testdata/digest/colorsys.py", "1-60"},
		{"../mutate/testdata/list.go", "1-80"},
		{"testdata/digest/go-README.md", ""},
		{"testdata/design.md", ""},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			dir := t.TempDir()
			doc, err := os.ReadFile(tc.file)
			require.NoError(t, err)
			name := filepath.Base(tc.file)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), doc, 0o644))
			args := []string{"summarize", "--json", "--file", name, "--model", s.model, "--max-words", "60"}
			if tc.lines != "" {
				args = append(args, "--lines", tc.lines)
			}
			r := s.locumIn(t, dir, t.TempDir(), args...)
			t.Logf("%s", r.stderr)
			require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
			if r.exit == 2 {
				errObj, _ := r.result["error"].(map[string]any)
				require.Equal(t, "reply_truncated", errObj["kind"], "summarize could not run:\n%s", r.stderr)
				fmt.Fprintf(os.Stderr, "realmodel: summarize %s: the reply ran to its room and was not taken as a digest\n", name)
				return
			}
			details, _ := r.result["details"].(map[string]any)
			raw, err := json.Marshal(details["claims"])
			require.NoError(t, err)
			var claims []claim
			require.NoError(t, json.Unmarshal(raw, &claims))
			lines := strings.Split(string(doc), "\n")
			supported := 0
			for _, c := range claims {
				if strings.Trim(strings.TrimSpace(strings.ToLower(c.Text)), ".") == "one sentence" {
					assert.NotEqual(t, "supported", c.Verdict, "the instruction's example text was taken for a claim")
				}
				if c.Verdict != "supported" {
					continue
				}
				supported++
				require.True(t, c.Lines[0] >= 1 && c.Lines[0] <= c.Lines[1] && c.Lines[1] <= len(lines) && c.Lines[1]-c.Lines[0] < 8, "claim %q cites lines %v of %d", c.Text, c.Lines, len(lines))
				cited := squash(strings.Join(lines[c.Lines[0]-1:c.Lines[1]], " "))
				assert.True(t, strings.HasPrefix(cited, strings.TrimSuffix(c.Quote, "...")), "claim %q: its quote %q is not lines %v", c.Text, c.Quote, c.Lines)
				t.Logf("supported: L%d-%d %s", c.Lines[0], c.Lines[1], c.Text)
			}
			if supported > 0 {
				assert.Equal(t, 0, r.exit)
			} else {
				assert.Equal(t, 1, r.exit)
			}
			fmt.Fprintf(os.Stderr, "realmodel: summarize %s: %d claims, %d supported\n", name, len(claims), supported)
		})
	}
}

// squash folds runs of white space to one space, as a quote may wrap differently from the file.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestAgentOnARealModel runs an agent task through the real model's own tool calls (the Qwen
// template's <tool_call>): whatever it reaches, the status is one of the closed set, the user's
// tree is untouched, and a completed run's branch, accepted with runs accept, passes the verify.
func TestAgentOnARealModel(t *testing.T) {
	s := shared
	tk := taskNamed(t, "go-add")
	dir := tk.materialize(t)
	home := t.TempDir()
	gittest.Init(t, dir)
	gittest.CommitAll(t, dir)
	before, err := os.ReadFile(filepath.Join(dir, "calc.go"))
	require.NoError(t, err)

	r := s.locumIn(t, dir, home, "agent", "--json", "--max-turns", "12", "--verify", tk.Verify, "--model", s.model,
		"In calc.go, "+tk.Task+" Then call finish.")
	t.Logf("%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	details, _ := r.result["details"].(map[string]any)
	status, _ := details["status"].(string)
	closed := []string{"completed", "verify_failed", "max_turns", "stalled", "model_error", "context_exhausted", "refused", "interrupted"}
	require.True(t, slices.Contains(closed, status), "status %q", status)
	after, err := os.ReadFile(filepath.Join(dir, "calc.go"))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the agent touched the user's tree")
	assert.Empty(t, strings.TrimSpace(gittest.Git(t, dir, "status", "--porcelain")), "the user's tree has changes")
	t.Logf("real-model agent: status %s after %v turns", status, details["turns"])
	if status != "completed" {
		assert.NotEqual(t, 0, r.exit)
		assert.Nil(t, details["branch"], "a run that did not complete left a branch")
		return
	}
	assert.Equal(t, 0, r.exit)
	id := strings.TrimPrefix(details["branch"].(string), "locum/agent/")
	acc := s.locumIn(t, dir, home, "runs", "accept", id)
	require.Equal(t, 0, acc.exit, "runs accept:\n%s", acc.stderr)
	ok, out := tk.verify(t, dir)
	assert.True(t, ok, "the accepted branch fails the verify:\n%s", out)
}

// TestEvalScreenOnARealModel screens the real model on the shipped eval tasks: the screen runs
// to its grades (exit 0 or 1, never 2), its result object gives each of the four tasks a
// verdict, and it exits 0 only when all four passed.
func TestEvalScreenOnARealModel(t *testing.T) {
	s := shared
	dir := t.TempDir()
	// Bounded as summarize is: a reply that runs away fails its task, it does not hold the tier.
	r := s.locumIn(t, dir, t.TempDir(), "eval", "--json", "--model", s.model, "--max-output-tokens", "1024")
	t.Logf("%s", r.stderr)
	require.NotEqual(t, 2, r.exit, "the screen could not run:\n%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	details, _ := r.result["details"].(map[string]any)
	screen, _ := details["screen"].([]any)
	require.Len(t, screen, 4, "one graded entry per shipped task")
	passed := 0
	for _, entry := range screen {
		grade, _ := entry.(map[string]any)["grade"].(map[string]any)
		ok, isBool := grade["passed"].(bool)
		require.True(t, isBool, "a task without a verdict: %v", entry)
		if ok {
			passed++
		}
	}
	assert.Equal(t, passed == 4, r.exit == 0, "the exit code disagrees with the grades")
	t.Logf("real-model eval screen: %d of 4 passed: %s", passed, strings.TrimSpace(r.stdout))
}

func taskNamed(t *testing.T, name string) task {
	t.Helper()
	for _, tk := range loadTasks(t) {
		if tk.Name == name {
			return tk
		}
	}
	t.Fatalf("no task %s", name)
	return task{}
}

// TestFirstDelegationOnARealModel plays the first delegation as the delegate-local skill and the
// person do on a fresh machine: init, status, the person's roles accept (its screen runs on the
// real model), then the skill's transform with no model named, kept with routing=operator.
func TestFirstDelegationOnARealModel(t *testing.T) {
	s := shared
	tk := taskNamed(t, "go-add")
	dir := tk.materialize(t)
	home := t.TempDir()
	gittest.Init(t, dir)

	r := s.locumIn(t, dir, home, "init")
	require.Equal(t, 0, r.exit, "init:\n%s", r.stderr)
	r = s.locumIn(t, dir, home, "status")
	require.Equal(t, 0, r.exit, "status:\n%s%s", r.stdout, r.stderr)
	assert.Contains(t, r.stdout, s.model, "status lists the server's model")
	r = s.locumIn(t, dir, home, "transform", "--json", "--file", tk.File, "--symbol", tk.Symbol, "--verify", tk.Verify, tk.Task)
	require.Equal(t, 1, r.exit, "a role with no routing is refused:\n%s", r.stderr)
	assert.Contains(t, r.stderr, "locum roles accept code MODEL")

	r = s.locumIn(t, dir, home, "roles", "accept", "code", s.model, "--yes", "--max-output-tokens", "1024")
	t.Logf("roles accept:\n%s%s", r.stdout, r.stderr)
	require.Equal(t, 0, r.exit, "roles accept:\n%s", r.stderr)
	r = s.locumIn(t, dir, home, "roles")
	assert.Regexp(t, `(?m)^code +operator +`+s.model, r.stdout)

	r = s.locumIn(t, dir, home, "transform", "--json", "--file", tk.File, "--symbol", tk.Symbol, "--verify", tk.Verify, tk.Task)
	t.Logf("first delegation: %s", lastLine(r.stderr))
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	assert.Equal(t, "operator", r.result["routing"])
	assert.Equal(t, s.model, r.result["model"])
	assert.Equal(t, "OK", r.result["status"], "the first delegation was not kept:\n%s", r.stderr)
	ok, vout := tk.verify(t, dir)
	assert.Equal(t, r.result["status"] == "OK", ok, "the verify on the final file disagrees with the outcome:\n%s", vout)
}

// handoffItem is one item of a handoff, as handoff --json gives it.
type handoffItem struct {
	Section string `json:"section"`
	Text    string `json:"text"`
	Lines   [2]int `json:"lines"`
	Quote   string `json:"quote"`
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
}

// TestHandoffOnARealModel hands over a real build log (go vet and go test of go-internal v1.16.0
// with the module proxy off, in runner/handoff/testdata/go-internal with its licence): every item
// locum calls supported is of one of the six sections and cites at most 8 lines of the log that
// hold its quote; exit 0 only with a supported item, exit 1 with none. The reply is bounded by
// --max-output-tokens and the run by 10 minutes; the items and the supported count are printed.
func TestHandoffOnARealModel(t *testing.T) {
	s := shared
	dir := t.TempDir()
	log, err := os.ReadFile("../runner/handoff/testdata/go-internal/test.log")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "build.log"), log, 0o644))
	r := s.locumWithin(t, 10*time.Minute, dir, t.TempDir(), "handoff", "--json", "--file", "build.log", "--model", s.model,
		"--max-output-tokens", "1024", "--timeout", "9m", "why the tests fail")
	t.Logf("%s", r.stderr)
	require.NotNil(t, r.result, "no result object; stderr:\n%s", r.stderr)
	if r.exit == 2 {
		errObj, _ := r.result["error"].(map[string]any)
		require.Equal(t, "reply_truncated", errObj["kind"], "handoff could not run:\n%s", r.stderr)
		t.Logf("realmodel: handoff build.log: the reply ran to its room and was not taken as a handoff")
		return
	}
	details, _ := r.result["details"].(map[string]any)
	raw, err := json.Marshal(details["items"])
	require.NoError(t, err)
	var items []handoffItem
	require.NoError(t, json.Unmarshal(raw, &items))
	lines := strings.Split(strings.TrimSuffix(string(log), "\n"), "\n")
	sections := []string{"work", "done", "open", "files", "commands", "next"}
	supported := 0
	for _, it := range items {
		t.Logf("realmodel: handoff item %s %s L%d-%d %s %q (%s)", it.Verdict, it.Section, it.Lines[0], it.Lines[1], it.Text, it.Quote, it.Reason)
		if it.Verdict != "supported" {
			continue
		}
		supported++
		assert.Contains(t, sections, it.Section, "item %q", it.Text)
		require.True(t, it.Lines[0] >= 1 && it.Lines[0] <= it.Lines[1] && it.Lines[1] <= len(lines) && it.Lines[1]-it.Lines[0] < 8, "item %q cites lines %v of %d", it.Text, it.Lines, len(lines))
		cited := squash(strings.Join(lines[it.Lines[0]-1:it.Lines[1]], " "))
		assert.Contains(t, cited, strings.TrimSuffix(it.Quote, "..."), "item %q: its quote is not in lines %v", it.Text, it.Lines)
	}
	if supported > 0 {
		assert.Equal(t, 0, r.exit)
	} else {
		assert.Equal(t, 1, r.exit)
	}
	t.Logf("realmodel: handoff build.log: %d items, %d supported", len(items), supported)
}
