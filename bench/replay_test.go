package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
)

// replayedOf reads a journal's text as a replay does, from a file in dir.
func replayedOf(t testing.TB, dir, text string) replayed {
	t.Helper()
	path := filepath.Join(dir, "20260101T000000Z-abcdef.jsonl")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	j, err := engine.LoadJournal(path, nil, replayLine)
	if err != nil {
		t.Fatal(err)
	}
	return readReplayed(j.Events)
}

// transformMode is a mode whose tool takes a transform's arguments: a bench's package imports no
// mode's, and a replay reads no more of a mode than its tool's arguments.
func transformMode(testing.TB) engine.Mode {
	return engine.Mode{Name: "transform", Model: engine.ChatModel, Tool: &engine.Tool{Args: []engine.ToolArg{
		{Name: "file", Required: true}, {Name: "lines"}, {Name: "symbol"}, {Name: "task", Required: true}, engine.VerifyArg,
	}}}
}

const (
	startLine  = `{"event":"run_start","run":"r","mode":"transform","parent":null}` + "\n"
	scopeLine  = `{"event":"scope","file":"calc.go","lines":"3-5","verify":"go test ./...","task":"make Add add","base":"` + sha + `","file_sha256":"ab"}` + "\n"
	commitLine = `{"event":"commit","commit":"` + sha + `"}` + "\n"
	endLine    = `{"event":"run_end","status":"OK"}` + "\n"
)

// A delegation is replayed from its sealed journal only where the journal holds all of it: the
// same file, span, task and verify, at the commit it started from; else why not.
func TestReplayArgs(t *testing.T) {
	for _, tc := range []struct {
		name, journal, why, verdict string
	}{
		{"whole", startLine + scopeLine + endLine, "", ""},
		{"accepted", startLine + scopeLine + commitLine + `{"event":"verdict","verdict":"accepted"}` + "\n" + endLine, "", "accepted"},
		{"rejected, the last word counting", startLine + scopeLine + `{"event":"verdict","verdict":"accepted"}` + "\n" + `{"event":"verdict","verdict":"rejected"}` + "\n" + endLine, "", "rejected"},
		{"a verdict no person gives", startLine + scopeLine + `{"event":"verdict","verdict":"green"}` + "\n" + endLine, "", ""},
		{"an item of another run", `{"event":"run_start","parent":{"run":"p","step":"s","index":1}}` + "\n" + scopeLine + endLine, "-", ""},
		{"not ended", startLine + scopeLine, "the run did not end", ""},
		{"no scope", startLine + endLine, "named its verify", ""},
		{"no verify", startLine + strings.Replace(scopeLine, `"verify":"go test ./...",`, ``, 1) + endLine, "named its verify", ""},
		{"a blank verify", startLine + strings.Replace(scopeLine, `"go test ./..."`, `"  "`, 1) + endLine, "named its verify", ""},
		{"no task", startLine + strings.Replace(scopeLine, `"task":"make Add add",`, ``, 1) + endLine, "does not hold its task", ""},
		{"no base", startLine + strings.Replace(scopeLine, `"base":"`+sha+`",`, ``, 1) + endLine, "names no commit", ""},
		{"a base that is no commit id", startLine + strings.Replace(scopeLine, sha, "HEAD~1", 1) + endLine, "names no commit", ""},
		{"a scope line malformed", startLine + `{"event":"scope","file":7}` + "\n" + endLine, "named its verify", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := replayedOf(t, t.TempDir(), tc.journal)
			args, why := replayArgs(transformMode(t), rp)
			if tc.why == "" && why != "" || !strings.Contains(why, tc.why) {
				t.Fatalf("why %q, want %q", why, tc.why)
			}
			if tc.why != "" {
				return
			}
			want := map[string]string{"file": "calc.go", "lines": "3-5", "task": "make Add add", "verify": "go test ./..."}
			for k, v := range want {
				if args[k] != v {
					t.Errorf("%s %q, want %q", k, args[k], v)
				}
			}
			if got := rp.personVerdict(); got != tc.verdict {
				t.Errorf("verdict %q, want %q", got, tc.verdict)
			}
		})
	}
}

// Whatever a journal holds, a replay reads it without failing, and takes it only with a task, a
// verify and a commit id to start from.
func FuzzReplayJournal(f *testing.F) {
	f.Add(startLine + scopeLine + commitLine + `{"event":"verdict","verdict":"accepted"}` + "\n" + endLine)
	f.Add(startLine + `{"event":"scope","file":"a","verify":"","task":"t","base":"x"}` + "\n" + endLine)
	f.Add(`{"event":"run_start","parent":{}}` + "\n" + `{"event":"scope","event":"scope"}` + "\n")
	m, dir := transformMode(f), f.TempDir()
	f.Fuzz(func(t *testing.T, journal string) {
		rp := replayedOf(t, dir, journal)
		args, why := replayArgs(m, rp)
		if why != "" {
			return
		}
		task, _ := args["task"].(string)
		verify, _ := args["verify"].(string)
		if task == "" || strings.TrimSpace(verify) == "" || !gitsafe.ValidSHA(rp.scope.Base) {
			t.Fatalf("replayed without a task, verify or base: %v, base %q", args, rp.scope.Base)
		}
		if v := rp.personVerdict(); v != "" && v != verdictAccepted && v != verdictRejected {
			t.Fatalf("verdict %q", v)
		}
	})
}
