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
// directory holds (worktrees, refs) take turns, since git locks its files for each and fails the
// other; commands inside one worktree do not need to.
type Worktrees struct {
	root string
	mu   sync.Mutex
}

// NewWorktrees is the worktrees of the repository at root.
func NewWorktrees(root string) *Worktrees { return &Worktrees{root: root} }

// Root is the repository's root.
func (g *Worktrees) Root() string { return g.root }

// Locked runs git in dir while no other command of g runs.
func (g *Worktrees) Locked(ctx context.Context, dir string, args ...string) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return Run(ctx, dir, args...)
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
	g.mu.Lock()
	defer g.mu.Unlock()
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
