package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"strings"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/review"
	"github.com/locumdev/locum/untrusted"
)

// Graded is a prompt task's predicate's word on a reply: Graded says the reply reached it.
type Graded struct {
	Graded, Passed bool
	// Evidence is the predicate's last finding, for the cell's outcome.
	Evidence string
}

// measured says a cell's run judged the model's work (kept it, or not): a refusal or a run that
// could not go on measured nothing of it, and a resume runs it again.
func measured(c engine.BenchCell) bool {
	return c.Status == string(engine.StatusOK) || c.Status == string(engine.StatusRed)
}

// runCell asks task t of the cell's model on its server, as a call of the task's mode through the
// job layer, and fills the cell with what became of it.
func (w *run) runCell(ctx context.Context, t task, index int, cell *engine.BenchCell) {
	fail := func(err error) {
		status, kind, _ := engine.Classify(err)
		cell.Status, cell.Kind, cell.Outcome = string(status), kind, oneLine(err.Error())
	}
	call := w.job.Call
	call.Model, call.RoleGiven = cell.Model, false
	call.BaseURL = cell.Server
	call.Batch = true
	call.JournalPath = w.cellJournal(index)
	call.Observer, call.Progress, call.Parent = nil, nil, nil
	if t.prompt != nil {
		j, grade := t.prompt.Cell()
		call.Argv = []string{Mode.Name, w.r.ID, t.key}
		p, err := w.job.Layer.Prepare(ctx, j.Mode(), call)
		if err != nil {
			fail(err)
			return
		}
		start := time.Now()
		res, err := p.RunIn(ctx, j, "")
		if err != nil {
			fail(err)
			return
		}
		fill(cell, res, time.Since(start))
		w.addRequests(res)
		if g := grade(); g.Graded {
			cell.Right, cell.Oracle = &g.Passed, "the task's predicate: "+oneLine(g.Evidence)
			if !g.Passed && cell.Status == string(engine.StatusRed) {
				cell.Outcome = "the reply failed the task's predicate: " + oneLine(g.Evidence)
			} else if g.Passed {
				cell.Outcome = "the reply passed the task's predicate"
			}
		}
		return
	}
	e := t.edit
	values := maps.Clone(e.args)
	tree := ""
	if !takesFrom(e.mode) {
		wt, err := gitsafe.WorktreeDir(w.place.Root, fmt.Sprintf("%s/c%04d", w.r.ID, index))
		if err == nil {
			wt, err = w.g.AddDetached(ctx, wt, e.commit, false)
		}
		if err != nil {
			fail(err)
			return
		}
		defer w.g.Drop(ctx, wt)
		tree = wt
	}
	tj, err := e.mode.Tool.Job(values)
	if err != nil {
		fail(err)
		return
	}
	call.Argv = append([]string{Mode.Name, w.r.ID, t.key}, tj.Argv...)
	p, err := w.job.Layer.Prepare(ctx, e.mode, call)
	if err != nil {
		fail(err)
		return
	}
	// What the host would have saved delegating the task itself: the call it writes and the
	// result it reads back, as a single call of the mode.
	callBytes, _ := json.Marshal(values)
	p.SetHost(&engine.HostSide{CallBytes: int64(len(callBytes)), ResultBytes: func(r *engine.Result) int64 {
		return int64(len(r.ShortReceipt()) + len(r.Outcome()) + 2)
	}})
	start := time.Now()
	res, err := p.RunIn(ctx, tj.Job, tree)
	if err != nil {
		fail(err)
		return
	}
	fill(cell, res, time.Since(start))
	cell.Saved = res.HostSaved
	w.addRequests(res)
	if branch, ok := review.BranchOf(e.mode.Name, res.RunID); ok {
		// The cell's branch is the bench's to judge and drop: it is no work of the person's.
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gitsafe.Timeout)
			defer cancel()
			_ = gitsafe.DeleteBranch(dctx, w.place.Root, branch)
		}()
		if res.Status == engine.StatusOK && e.verdict != "" {
			w.judgeVerdict(ctx, e, branch, cell)
		}
	}
	if res.Status == engine.StatusOK && e.oracle != nil && tree != "" {
		w.runOracle(ctx, e.oracle, tree, cell)
	}
}

// addRequests counts a cell's requests, tokens and model time in the bench's own result, as a
// workflow counts its items', so its receipt sums what every cell asked.
func (w *run) addRequests(res *engine.Result) {
	if res.Attempts == 0 && res.In == nil && res.Out == nil {
		return // asked no model: nothing to count, and no unknown either
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.r.AddRequests(res.Attempts, client.Usage{In: res.In, Out: res.Out}, time.Duration(res.TimeMs)*time.Millisecond)
}

// fill records the run's result in the cell.
func fill(cell *engine.BenchCell, res *engine.Result, wall time.Duration) {
	cell.RunID = res.RunID
	cell.Status = string(res.Status)
	cell.WallMs = wall.Milliseconds()
	cell.TTFTms, cell.Rate, cell.InTokens, cell.OutTokens = res.TTFTms, res.Rate, res.In, res.Out
	why := ""
	if res.Error != nil {
		cell.Kind = res.Error.Kind
		why, _, _ = strings.Cut(res.Error.Message, "\n")
	}
	out := res.Outcome()
	switch {
	case out != "" && why != "":
		out += ": " + why
	case out == "":
		out = why
	}
	cell.Outcome = oneLine(out)
	if res.Status == engine.StatusOK && res.Baseline != nil {
		cell.Shown = engine.Shown(*res.Baseline)
	}
}

// judgeVerdict carries a person's verdict on the run replayed to a cell that made the same change:
// the same tree at the cell's branch as at the commit that run made. A different change is no
// more judged by that verdict than any other.
func (w *run) judgeVerdict(ctx context.Context, e *editTask, branch string, cell *engine.BenchCell) {
	mine := treeOf(ctx, w.place.Root, "refs/heads/"+branch)
	if mine == "" {
		return
	}
	theirs := ""
	if gitsafe.ValidSHA(e.original) {
		theirs = treeOf(ctx, w.place.Root, e.original)
	}
	switch {
	case theirs == "":
		cell.Oracle = "the run replayed was " + e.verdict + ", but its commit is not in the repository to compare with"
	case mine != theirs:
		cell.Oracle = "the run replayed was " + e.verdict + "; this cell made another change, which that verdict does not judge"
	default:
		right := e.verdict == verdictAccepted
		cell.Right = &right
		cell.Oracle = "the same change as the run replayed, which a person " + e.verdict
	}
}

// treeOf is the tree of commit-ish rev, "" where there is none.
func treeOf(ctx context.Context, root, rev string) string {
	out, err := gitsafe.Run(ctx, root, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{tree}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// runOracle runs a bench folder's oracle on a scratch copy of the tree as the cell's kept edit
// left it, the oracle's hidden files laid over it, contained as a verify is: exit 0 is right,
// exit 1 wrong, anything else no verdict. The model never saw the files, and the cell's tree is
// never the oracle's to change.
func (w *run) runOracle(ctx context.Context, o *oracle, tree string, cell *engine.BenchCell) {
	scratch, err := os.MkdirTemp("", "locum-oracle-")
	if err != nil {
		cell.Oracle = "no oracle verdict: no scratch directory: " + oneLine(err.Error())
		return
	}
	defer func() { _ = rails.RemoveScratch(scratch) }()
	if err := rails.CopyTree(tree, scratch); err != nil {
		cell.Oracle = "no oracle verdict: the tree could not be copied: " + oneLine(err.Error())
		return
	}
	if err := overlay(scratch, o.files); err != nil {
		cell.Oracle = "no oracle verdict: its files could not be laid over the tree: " + oneLine(err.Error())
		return
	}
	s := w.r.Spec.Settings
	vr, err := rails.RunShell(ctx, rails.ShellCommand{Command: o.command, Dir: scratch, Timeout: s.Duration(packs.VerifyTimeout), TailBytes: 4096,
		Sandbox: engine.VerifySandbox(s, w.place.Root, scratch)})
	switch {
	case err != nil:
		cell.Oracle = "no oracle verdict: " + oneLine(err.Error())
	case vr.Exited && (vr.ExitCode == 0 || vr.ExitCode == 1):
		right := vr.ExitCode == 0
		cell.Right = &right
		cell.Oracle = "the oracle: " + vr.Verdict()
	default:
		cell.Oracle = "no oracle verdict: " + vr.Verdict() + ": " + oneLine(lastLine(string(vr.Output)))
	}
}

// lastLine is the last line of s that holds anything.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return untrusted.Escape(lines[len(lines)-1])
}
