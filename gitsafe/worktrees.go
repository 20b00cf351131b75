package gitsafe

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Worktrees makes and removes the detached worktrees of one repository that a run of many items
// (a workflow, a bench) gives each item. The commands that change what the repository's own git
// directory holds (worktrees, refs) take turns (RunLocked); commands inside one worktree do not
// need to.
type Worktrees struct {
	root string
}

// repoLocks holds, for each repository by its root's real path, the lock its commands that change
// the git directory's shared files take in this process: worktrees added, removed or pruned, refs
// written or deleted. git locks each such file and fails a second command that finds it locked; an
// add reads every other worktree's files and fails on one half made; a prune removes what another
// command's add has half made. A bench runs many runs at once on one repository, each mode adding
// and removing worktrees of its own, so the lock is the repository's, not one caller's.
var repoLocks sync.Map

func repoLock(root string) *sync.Mutex {
	key := root
	if real, err := filepath.EvalSymlinks(root); err == nil {
		key = real
	}
	mu, _ := repoLocks.LoadOrStore(filepath.Clean(key), &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// RunLocked runs git in dir while no other RunLocked command on the repository at root runs in
// this process: for a command that changes its worktrees or refs.
func RunLocked(ctx context.Context, root, dir string, args ...string) (string, error) {
	mu := repoLock(root)
	mu.Lock()
	defer mu.Unlock()
	return Run(ctx, dir, args...)
}

// NewWorktrees is the worktrees of the repository at root.
func NewWorktrees(root string) *Worktrees { return &Worktrees{root: root} }

// Root is the repository's root.
func (g *Worktrees) Root() string { return g.root }

// Locked runs git in dir while no other command that changes the repository's worktrees or refs
// runs (RunLocked).
func (g *Worktrees) Locked(ctx context.Context, dir string, args ...string) (string, error) {
	return RunLocked(ctx, g.root, dir, args...)
}

// Head is the commit dir's HEAD is at.
func Head(ctx context.Context, dir string) (string, error) {
	out, err := Run(ctx, dir, "rev-parse", "--verify", "HEAD^{commit}")
	return strings.TrimSpace(out), err
}

// AddDetached checks commit out, detached, in a new worktree at path, and returns the path with
// its symbolic links resolved. With noCheckout the worktree holds no file, for a caller that fills
// it itself.
func (g *Worktrees) AddDetached(ctx context.Context, path, commit string, noCheckout bool) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("making the worktree folder: %w", err)
	}
	args := []string{"worktree", "add", "--quiet", "--detach"}
	if noCheckout {
		args = append(args, "--no-checkout")
	}
	if _, err := g.Locked(ctx, g.root, append(args, path, commit)...); err != nil {
		return "", fmt.Errorf("creating the worktree: %w", err)
	}
	return filepath.EvalSymlinks(path)
}

// AddBranch checks commit out in a new worktree at path on a new branch.
func (g *Worktrees) AddBranch(ctx context.Context, path, branch, commit string) (string, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("making the worktree folder: %w", err)
	}
	if _, err := g.Locked(ctx, g.root, "worktree", "add", "--quiet", "-b", branch, path, commit); err != nil {
		return "", fmt.Errorf("creating the worktree: %w", err)
	}
	return filepath.EvalSymlinks(path)
}

// Remove removes the worktree at path.
func (g *Worktrees) Remove(ctx context.Context, path string) error {
	return RemoveWorktree(ctx, g.root, path)
}

// Drop removes a worktree an item is done with, even once ctx is cancelled: a stopped run leaves
// none behind. What it fails to remove, RemoveRun removes as the run ends.
func (g *Worktrees) Drop(ctx context.Context, path string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	_ = g.Remove(ctx, path)
}

// RemoveRun removes every worktree under run id's folder (WorktreeDir), and the folder.
func (g *Worktrees) RemoveRun(ctx context.Context, id string) error {
	dir, err := WorktreeDir(g.root, id)
	if err != nil {
		// No place locum may write: it made no worktree there, and follows no link to look.
		return nil
	}
	if st, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	} else if !st.IsDir() {
		return fmt.Errorf("%s is not a folder locum made", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		// Only the folders git made: a link here leads to someone else's files.
		if e.Type().IsDir() {
			errs = append(errs, g.Remove(ctx, filepath.Join(dir, e.Name())))
		}
	}
	errs = append(errs, os.RemoveAll(dir))
	_, perr := g.Locked(ctx, g.root, "worktree", "prune")
	return errors.Join(append(errs, perr)...)
}

// TopHead is the commit HEAD is at in the repository whose top level is root; "" where root is
// no repository's top level (a folder inside one, or none), HEAD names no commit yet, or git
// cannot say. Paths from root are then paths in that commit's tree.
func TopHead(ctx context.Context, root string) string {
	if _, err := os.Lstat(filepath.Join(root, ".git")); err != nil {
		return ""
	}
	out, err := Run(ctx, root, "rev-parse", "--show-toplevel", "HEAD^{commit}")
	lines := strings.Fields(out)
	if err != nil || len(lines) != 2 || !ValidSHA(lines[1]) {
		return ""
	}
	top, err1 := filepath.EvalSymlinks(lines[0])
	real, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil || top != real {
		return ""
	}
	return lines[1]
}
