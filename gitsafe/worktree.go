package gitsafe

import (
	"context"
	"os"
	"regexp"
	"strings"
)

// The commands the modes that leave a branch share: a worktree removed, a branch deleted, a
// commit made on a machine with no identity configured.

// RemoveWorktree removes the worktree at path (if it is still there) and prunes git's record of it.
func RemoveWorktree(ctx context.Context, root, path string) error {
	if _, err := os.Lstat(path); err == nil {
		if _, err := RunLocked(ctx, root, root, "worktree", "remove", "--force", path); err != nil {
			// A worktree git does not know is a plain folder of locum's.
			if rerr := os.RemoveAll(path); rerr != nil {
				return err
			}
		}
	}
	_, err := RunLocked(ctx, root, root, "worktree", "prune")
	return err
}

// DeleteBranch deletes a branch if it exists.
func DeleteBranch(ctx context.Context, root, branch string) error {
	if _, err := Run(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		return nil
	}
	_, err := RunLocked(ctx, root, root, "branch", "-D", branch)
	return err
}

// Identity is the committer to give git in dir: none where the repository has one configured,
// else locum's own, so a commit on a fresh machine still goes through.
func Identity(ctx context.Context, dir string) []string {
	if out, err := Run(ctx, dir, "config", "user.email"); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	return []string{"-c", "user.name=locum agent", "-c", "user.email=locum@localhost"}
}

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// ValidSHA reports whether s is a full commit id, SHA-1 or SHA-256.
func ValidSHA(s string) bool { return shaPattern.MatchString(s) }
