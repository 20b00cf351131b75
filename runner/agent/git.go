package agent

import (
	"context"
	"os"
	"regexp"
	"strings"

	"github.com/locumdev/locum/gitsafe"
)

// gitTimeout bounds one git command.
const gitTimeout = gitsafe.Timeout

// GitError is a git command that failed.
type GitError = gitsafe.Error

// Git runs git in dir through gitsafe: nothing the repository's config names runs beside it, a
// repository whose config locum cannot run git under is refused, and an object a partial clone
// lacks is refused rather than fetched.
func Git(ctx context.Context, dir string, args ...string) (string, error) {
	return gitsafe.Run(ctx, dir, args...)
}

// runIDPattern is the shape of a run id (engine.NewRunID). A branch name is made from it, so an
// id read back from a journal's file name is checked against it first.
var runIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// ValidRunID reports whether id has the shape of a run id.
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }

// BranchPrefix starts the name of every agent branch.
const BranchPrefix = "locum/agent/"

// Branch is the branch of run id.
func Branch(id string) string { return BranchPrefix + id }

var shaPattern = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// ValidSHA reports whether s is a full commit id.
func ValidSHA(s string) bool { return shaPattern.MatchString(s) }

// identity fills in a committer for a repository that has none configured, so a run on a fresh
// machine can still commit its work; a configured identity is left alone.
func identity(ctx context.Context, dir string) []string {
	if out, err := Git(ctx, dir, "config", "user.email"); err == nil && strings.TrimSpace(out) != "" {
		return nil
	}
	return []string{"-c", "user.name=locum agent", "-c", "user.email=locum@localhost"}
}

// RemoveWorktree removes the worktree at path (if it is still there) and prunes git's record of it.
func RemoveWorktree(ctx context.Context, root, path string) error {
	if _, err := os.Lstat(path); err == nil {
		if _, err := Git(ctx, root, "worktree", "remove", "--force", path); err != nil {
			// A worktree git no longer knows is a plain folder of locum's.
			if rerr := os.RemoveAll(path); rerr != nil {
				return err
			}
		}
	}
	_, err := Git(ctx, root, "worktree", "prune")
	return err
}

// DeleteBranch deletes a branch if it exists.
func DeleteBranch(ctx context.Context, root, branch string) error {
	if _, err := Git(ctx, root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch); err != nil {
		return nil
	}
	_, err := Git(ctx, root, "branch", "-D", branch)
	return err
}

// Identity is the committer to give git in dir: none where the repository has one configured,
// else locum's own, so a commit on a fresh machine still goes through.
func Identity(ctx context.Context, dir string) []string { return identity(ctx, dir) }
