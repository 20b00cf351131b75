// Package review is a run's branch under review: its diff shown, accepted (merged), or rejected
// (dropped). The modes whose runs leave a branch register how it is named. A run is found
// through its journal, which lives in the repository's git directory and so is not trusted: its
// id must have a run id's shape before a branch name is made of it, and its base must be a full
// commit id.
package review

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
)

// StatusCompleted is the details.status of the run_end of a run whose verify passed: the only
// run whose branch is accepted.
const StatusCompleted = "completed"

// Review is a run that left a branch.
type Review struct {
	Root   string
	RunID  string
	Branch string
	Base   string // "" when the journal does not say
	Status string // details.status of run_end; "" when the run never ended
	// Commit is the commit the run made on its branch, as its journal recorded; "" when it made
	// none (its branch's tip is then Base).
	Commit string
	// journal is the run's journal file; ended says it holds the run's end.
	journal string
	ended   bool
}

// MovedBranchError is a run's branch whose tip is not what the run left there: something
// committed to it, or reset it, since. accept will not merge what the run did not verify.
type MovedBranchError struct {
	Branch, Tip, Want string
}

func (e *MovedBranchError) Error() string {
	return fmt.Sprintf("%s is at %s, not at %s where the run left it: the branch changed since its verify passed, so it is not merged; read it with runs show --diff, and merge it yourself if you mean to", e.Branch, short(e.Tip), short(e.Want))
}

func short(sha string) string { return sha[:min(12, len(sha))] }

// NotReviewableError is a run id that names no run with a branch to review.
type NotReviewableError struct {
	Reason string
	// NotARun is a name that is no run to review at all: a bad argument, not a refusal.
	NotARun bool
}

func (e *NotReviewableError) Error() string { return e.Reason }

// DirtyTreeError is a working tree with uncommitted changes: accept will not merge into it.
type DirtyTreeError struct{ Status string }

func (e *DirtyTreeError) Error() string {
	return "the working tree has uncommitted changes; commit or stash them, then accept again:\n" + strings.TrimRight(e.Status, "\n")
}

// ConflictError is a branch that does not merge cleanly; the merge was aborted.
type ConflictError struct {
	Branch string
	Output string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s does not merge cleanly into the current branch; the merge was aborted and nothing changed. Merge it by hand (git merge %s) or reject it", e.Branch, e.Branch)
}

// reviewedMode is how a mode whose runs leave a branch names it from a run id, and reads its
// closed status from its run_end's details.
type reviewedMode struct {
	branch func(id string) string
	status func(details json.RawMessage) string
}

// reviewed are the modes whose runs leave a branch to review.
var (
	reviewedMu sync.RWMutex
	reviewed   = map[string]reviewedMode{}
)

// Register makes the runs of mode, whose completed runs leave a branch named branch(id) with
// these journal events: worktree with its base, commit, and run_end, whose details status reads
// as the run's closed status (StatusCompleted when its verify passed, "" where they say none),
// reviewable with runs show --diff, accept and reject. The mode reads its own details, as the
// type it writes them with.
func Register(mode string, branch func(id string) string, status func(details json.RawMessage) string) {
	reviewedMu.Lock()
	defer reviewedMu.Unlock()
	reviewed[mode] = reviewedMode{branch: branch, status: status}
}

func reviewedAs(mode string) (reviewedMode, bool) {
	reviewedMu.RLock()
	defer reviewedMu.RUnlock()
	m, ok := reviewed[mode]
	return m, ok
}

// Find reads run id's journal (id may be a unique prefix) and names its branch.
func Find(ctx context.Context, root, id string) (*Review, error) {
	dir, err := engine.RunsDir(root)
	if err != nil {
		return nil, err
	}
	path, events, err := engine.ReadRun(dir, id)
	if err != nil {
		return nil, &NotReviewableError{Reason: err.Error(), NotARun: true}
	}
	return Of(ctx, root, path, events)
}

// Of is the review of the run whose journal, already read, is at path in root's journals and
// holds events.
func Of(ctx context.Context, root, path string, events []map[string]any) (*Review, error) {
	runID := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !engine.ValidRunID(runID) {
		return nil, &NotReviewableError{Reason: fmt.Sprintf("%q is not the name of a run journal locum writes", filepath.Base(path)), NotARun: true}
	}
	rv := &Review{Root: root, RunID: runID, journal: path}
	var mode reviewedMode
	reviewable := false
	for _, ev := range events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			if m, ok := reviewedAs(e.Mode); ok {
				mode, reviewable, rv.Branch = m, true, m.branch(runID)
			}
		case "run_end":
			if reviewable {
				e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
				rv.Status = mode.status(e.Details)
			}
			rv.ended = true
		case "worktree":
			if e, _ := engine.DecodeEvent[engine.WorktreeEvent](ev); gitsafe.ValidSHA(e.Base) {
				rv.Base = e.Base
			}
		case "commit":
			// An agent's commit names the commit as a workflow's does; only its type differs.
			if e, _ := engine.DecodeEvent[engine.BranchCommitEvent](ev); gitsafe.ValidSHA(e.Commit) {
				rv.Commit = e.Commit
			}
		}
	}
	if !reviewable {
		return nil, &NotReviewableError{Reason: fmt.Sprintf("run %s is not an agent or workflow run", runID), NotARun: true}
	}
	if _, err := gitsafe.Run(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+rv.Branch); err != nil {
		return nil, &NotReviewableError{Reason: fmt.Sprintf("run %s has no branch %s: it did not complete, or it was accepted or rejected", runID, rv.Branch)}
	}
	return rv, nil
}

// Diff is the branch's change from where it started (from the merge base with HEAD when the
// journal does not name its base), its first limit bytes kept: a branch is the repository's, and
// anyone could have committed a file of any size to it.
func (rv *Review) Diff(ctx context.Context, limit int) (gitsafe.Capped, error) {
	base := rv.Base
	if base == "" {
		out, err := gitsafe.Run(ctx, rv.Root, "merge-base", "HEAD", "refs/heads/"+rv.Branch)
		if err != nil {
			return gitsafe.Capped{}, err
		}
		base = strings.TrimSpace(out)
	}
	return gitsafe.RunCapped(ctx, rv.Root, limit, "diff", "--no-color", "--no-ext-diff", "--no-textconv", base, "refs/heads/"+rv.Branch, "--")
}

// Accept merges the branch into the current branch: a fast-forward when it can, else a merge
// commit; then it removes the run's worktree (if kept) and deletes the merged branch. It says
// which it did.
func (rv *Review) Accept(ctx context.Context) (string, error) {
	if rv.Status != StatusCompleted {
		return "", &NotReviewableError{Reason: fmt.Sprintf("run %s did not complete (status %q); only a run whose verify passed is accepted. Read it with runs show --diff, or reject it", rv.RunID, rv.Status)}
	}
	status, err := gitsafe.Run(ctx, rv.Root, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=all")
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(status) != "" {
		return "", &DirtyTreeError{Status: status}
	}
	if want := cmp.Or(rv.Commit, rv.Base); want != "" {
		tip, err := gitsafe.Run(ctx, rv.Root, "rev-parse", "--verify", "--quiet", "refs/heads/"+rv.Branch+"^{commit}")
		if err != nil {
			return "", err
		}
		if tip = strings.TrimSpace(tip); tip != want {
			return "", &MovedBranchError{Branch: rv.Branch, Tip: tip, Want: want}
		}
	}
	// A partial clone that lacks an object of either side, or of their base, is refused before
	// the merge: git would fail part-way, with files of the work tree already changed.
	commits := []string{"HEAD", "refs/heads/" + rv.Branch}
	if out, err := gitsafe.Run(ctx, rv.Root, "merge-base", "HEAD", "refs/heads/"+rv.Branch); err == nil {
		commits = append(commits, strings.TrimSpace(out))
	}
	if err := gitsafe.Complete(ctx, rv.Root, commits...); err != nil {
		return "", err
	}
	how := "fast-forward"
	if _, err := gitsafe.Run(ctx, rv.Root, "merge", "--ff-only", "--quiet", "refs/heads/"+rv.Branch); err != nil {
		var missing *gitsafe.MissingObjectsError
		if errors.As(err, &missing) {
			return "", err
		}
		how = "merge"
		args := append(gitsafe.Identity(ctx, rv.Root), "merge", "--no-ff", "--no-edit", "--quiet", "-m", "Merge "+rv.Branch, "refs/heads/"+rv.Branch)
		if out, err := gitsafe.Run(ctx, rv.Root, args...); err != nil {
			_, _ = gitsafe.Run(ctx, rv.Root, "merge", "--abort")
			var ge *gitsafe.Error
			if errors.As(err, &ge) {
				return "", &ConflictError{Branch: rv.Branch, Output: out}
			}
			return "", err
		}
	}
	if err := rv.removeWorktree(ctx); err != nil {
		return how, err
	}
	_, err = gitsafe.Run(ctx, rv.Root, "branch", "-D", rv.Branch)
	return how, err
}

// Reject deletes the run's worktree (if kept) and its branch; a run still going is refused, its
// worktree in use.
func (rv *Review) Reject(ctx context.Context) error {
	if !rv.ended && engine.JournalLive(rv.journal) {
		return &NotReviewableError{Reason: fmt.Sprintf("run %s is still running, in its worktree: stop it first (Ctrl-C where it runs, or end its locum process; a workflow run resumes with locum run --resume %s), then reject it", rv.RunID, rv.RunID)}
	}
	if err := rv.removeWorktree(ctx); err != nil {
		return err
	}
	return gitsafe.DeleteBranch(ctx, rv.Root, rv.Branch)
}

// removeWorktree removes the run's worktree if it kept one. Where the repository has no place
// locum may write one, locum made none, and nothing is removed by following a link out.
func (rv *Review) removeWorktree(ctx context.Context) error {
	wt, err := gitsafe.WorktreeDir(rv.Root, rv.RunID)
	if err != nil {
		return nil
	}
	return gitsafe.RemoveWorktree(ctx, rv.Root, wt)
}

// BranchOf is the branch a run of mode with id leaves where it completes, for a mode whose runs
// leave one (Register); false for any other mode.
func BranchOf(mode, id string) (string, bool) {
	m, ok := reviewedAs(mode)
	if !ok {
		return "", false
	}
	return m.branch(id), true
}
