package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// LeftOut is a delegation a bench did not replay, and why.
type LeftOut struct {
	Run string `json:"run"`
	Why string `json:"why"`
}

// maxLeftOut bounds the delegations left out that a bench names; the rest it counts.
const maxLeftOut = 32

// replayLines are the journal lines a replay reads; every other is passed over undecoded.
var replayLines = [][]byte{[]byte(`"run_start"`), []byte(`"scope"`), []byte(`"verdict"`), []byte(`"commit"`), []byte(`"run_end"`)}

// replayLine says a journal line may be one a replay reads.
func replayLine(line []byte) bool {
	return slices.ContainsFunc(replayLines, func(k []byte) bool { return bytes.Contains(line, k) })
}

// replayed is what a delegation's journal says of it, as a replay reads it.
type replayed struct {
	parent  bool
	scope   engine.FileScopeEvent
	scoped  bool
	verdict string
	commit  string
	ended   bool
}

// replays reads the repository's journals for the delegations of mode to replay: the last n
// (newest first), or with ids the runs they name (a resumed bench's). Only a journal that ends
// in a seal holding under the operator's key counts, read under the journal reader's bounds: a
// repository can bring journals of its own, and a replay runs the verify it names. A run that was
// an item of another (a workflow's) is no delegation of its own and is passed over; one that
// cannot be replayed is left out, with why.
func (w *run) replays(ctx context.Context, mode string, n int, ids []string) ([]task, []LeftOut, int, error) {
	m, ok := engine.LookupMode(mode)
	if !ok || m.Tool == nil || m.Model != engine.ChatModel {
		return nil, nil, 0, engine.BadInputf("--from-journal replays the runs of a mode a host delegates to a chat model (%s), not %s", strings.Join(replayableModes(), ", "), untrusted.Escape(mode))
	}
	if w.key == nil {
		return nil, nil, 0, engine.Refusalf("--from-journal: %s: no operator key to tell the journals locum sealed from any other", oneLine(w.noKey.Error()))
	}
	dir, err := engine.RunsDir(w.place.Root)
	if err != nil {
		return nil, nil, 0, err
	}
	runs, err := engine.ListRuns(dir, w.key)
	if err != nil {
		return nil, nil, 0, err
	}
	var tasks []task
	var left []LeftOut
	extra := 0
	leave := func(run, why string) {
		if len(left) < maxLeftOut {
			left = append(left, LeftOut{Run: run, Why: why})
		} else {
			extra++
		}
	}
	for _, s := range runs {
		switch {
		case ids == nil && len(tasks) >= n:
			return tasks, left, extra, nil
		case ids != nil && !slices.Contains(ids, s.ID):
			continue
		case s.Mode != mode:
			if ids != nil {
				leave(s.ID, "no run of "+mode)
			}
			continue
		case !s.Sealed:
			leave(s.ID, "its journal is not sealed: "+engine.Unsealed)
			continue
		}
		t, why, err := w.replay(ctx, m, s.Path)
		switch {
		case err != nil:
			return nil, nil, 0, err
		case why == "-":
			// An item of another run: no delegation of its own.
		case why != "":
			leave(s.ID, why)
		default:
			tasks = append(tasks, t)
		}
	}
	for _, id := range ids {
		if !slices.ContainsFunc(tasks, func(t task) bool { return t.key == replayKey(id) }) && !slices.ContainsFunc(left, func(l LeftOut) bool { return l.Run == id }) {
			leave(id, "no journal of this run in "+dir)
		}
	}
	return tasks, left, extra, nil
}

func replayKey(run string) string { return SourceReplay + "/" + run }

// replayableModes are the registered modes whose runs a bench can replay.
func replayableModes() []string {
	var out []string
	for _, name := range engine.RegisteredModes() {
		if m, _ := engine.LookupMode(name); m.Tool != nil && m.Model == engine.ChatModel {
			out = append(out, name)
		}
	}
	return out
}

// replay reads one sealed journal of a run of m and makes its task: the same task and verify,
// the span at the commit the run started from. why says why it cannot be replayed ("-" for a run
// that is no delegation of its own); err is a failure to read at all.
func (w *run) replay(ctx context.Context, m engine.Mode, path string) (task, string, error) {
	j, err := engine.LoadJournal(path, w.key, replayLine)
	if err != nil {
		return task{}, "its journal could not be read: " + oneLine(err.Error()), nil
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !j.Sealed || j.Run != id || !engine.ValidRunID(id) {
		return task{}, "its journal is not sealed: " + engine.Unsealed, nil
	}
	rp := readReplayed(j.Events)
	args, why := replayArgs(m, rp)
	if why != "" {
		return task{}, why, nil
	}
	sc := rp.scope
	if _, err := gitsafe.Run(ctx, w.place.Root, "cat-file", "-e", sc.Base+"^{commit}"); err != nil {
		return task{}, "the commit it started from, " + sc.Base + ", is not in this repository", nil
	}
	if sc.File != "" {
		if err := sameFile(ctx, w.place.Root, sc.Base, sc.File, sc.FileSHA256); err != nil {
			return task{}, err.Error(), nil
		}
	}
	verdict := rp.personVerdict()
	edit := &editTask{mode: m, args: args, commit: sc.Base, verdict: verdict, original: rp.commit}
	return task{key: replayKey(id), source: SourceReplay, edit: edit,
		fingerprint: fingerprintOf(SourceReplay, m.Name, args, sc.Base, verdict, rp.commit)}, "", nil
}

// The verdicts a person gives a run (locum runs accept, runs reject) that a replay carries.
const (
	verdictAccepted = "accepted"
	verdictRejected = "rejected"
)

// maxReplayFile bounds the file a replay compares at its base commit: past it, no prompt held it.
const maxReplayFile = 16 << 20

// sameFile says why the file at commit base is not the one a run read (its bytes' SHA-256 is
// want), nil where it is: a run of a file with changes not committed is not replayed at the
// commit, whose file the model never saw.
func sameFile(ctx context.Context, root, base, file, want string) error {
	if want == "" {
		return fmt.Errorf("its journal does not hold the hash of the file it read")
	}
	out, err := gitsafe.RunCapped(ctx, root, maxReplayFile, "cat-file", "blob", base+":"+file)
	if err != nil || out.Cut() {
		return fmt.Errorf("%s is not a file of its base commit %s", untrusted.Escape(file), base)
	}
	sum := sha256.Sum256([]byte(out.Text))
	if hex.EncodeToString(sum[:]) != want {
		return fmt.Errorf("%s held changes not committed when the run read it: the file at its base commit is not the one the model saw", untrusted.Escape(file))
	}
	return nil
}

// readReplayed reads what a replay needs of a journal's events: whether the run was an item of
// another, its first scope, the person's last verdict, its commit, and whether it ended. The
// events are the journal's, decoded field by field; a malformed one counts as absent.
func readReplayed(events []map[string]any) replayed {
	var rp replayed
	for _, ev := range events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			rp.parent = e.Parent != nil
		case "scope":
			if !rp.scoped {
				rp.scope, rp.scoped = engine.DecodeEvent[engine.FileScopeEvent](ev)
			}
		case "verdict":
			e, _ := engine.DecodeEvent[engine.VerdictEvent](ev)
			rp.verdict = e.Verdict
		case "commit":
			if e, ok := engine.DecodeEvent[engine.BranchCommitEvent](ev); ok && gitsafe.ValidSHA(e.Commit) {
				rp.commit = e.Commit
			}
		case "run_end":
			rp.ended = true
		}
	}
	return rp
}

// replayArgs are the arguments of m's tool that replay the run rp read, or why it cannot be
// replayed from what its journal holds ("-" for an item of another run, no delegation of its
// own): the same file, span, task and verify, at the commit it started from.
func replayArgs(m engine.Mode, rp replayed) (engine.ToolArgs, string) {
	sc := rp.scope
	switch {
	case rp.parent:
		return nil, "-"
	case !rp.ended:
		return nil, "the run did not end"
	case !rp.scoped || sc.Verify == nil || strings.TrimSpace(*sc.Verify) == "":
		return nil, "the run ended before it named its verify"
	case sc.Task == "":
		return nil, "its journal does not hold its task (a run of a locum from before journals held it)"
	case !gitsafe.ValidSHA(sc.Base):
		return nil, "its journal names no commit it started from (it ran outside a repository's top level, or before its first commit)"
	}
	values := map[string]string{toolArgFile: sc.File, toolArgLines: sc.Lines, toolArgTask: sc.Task, toolArgVerify: *sc.Verify, toolArgFrom: sc.Base}
	args, ok := toolArgs(m, values)
	if !ok {
		return nil, "its journal does not hold every argument " + m.Name + " takes"
	}
	return args, ""
}

// personVerdict is the person's word on the run (locum runs accept, runs reject), "" for none.
func (rp replayed) personVerdict() string {
	if rp.verdict == verdictAccepted || rp.verdict == verdictRejected {
		return rp.verdict
	}
	return ""
}
