package workflow

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locumdev/locum/gitsafe"
)

// BranchPrefix starts the branch a workflow run offers its combined result on.
const BranchPrefix = "locum/run/"

// Branch is the branch of workflow run id.
func Branch(id string) string { return BranchPrefix + id }

// itemRefPrefix holds the commits of a run's green items until they are combined: refs outside
// refs/heads, so they neither crowd git branch nor leave the commits to git gc, and they outlive
// an interrupted run for its resume.
const itemRefPrefix = "refs/locum/items/"

func itemRef(runID, step string, index int) string {
	return fmt.Sprintf("%s%s/%s/%04d", itemRefPrefix, runID, step, index)
}

// repo runs the git commands of one workflow run on the repository at root, those that change
// what its own git directory holds taking turns (gitsafe.Worktrees).
type repo struct{ *gitsafe.Worktrees }

func (g *repo) locked(ctx context.Context, dir string, args ...string) (string, error) {
	return g.Locked(ctx, dir, args...)
}

// head is the commit dir's HEAD is at.
func head(ctx context.Context, dir string) (string, error) { return gitsafe.Head(ctx, dir) }

// commitFile commits file (relative to the worktree) in worktree wt on its detached HEAD and
// returns the commit; "" when the file is as HEAD has it.
func commitFile(ctx context.Context, wt, file, message string) (string, error) {
	if _, err := gitsafe.Run(ctx, wt, "add", "--", ":(literal)"+file); err != nil {
		return "", err
	}
	if _, err := gitsafe.Run(ctx, wt, "diff", "--no-ext-diff", "--no-textconv", "--cached", "--quiet"); err == nil {
		return "", nil
	}
	args := append(gitsafe.Identity(ctx, wt), "commit", "--quiet", "--no-verify", "-m", message)
	if _, err := gitsafe.Run(ctx, wt, args...); err != nil {
		return "", err
	}
	return head(ctx, wt)
}

// pick applies commit onto the branch checked out in wt. A commit that does not apply cleanly is
// a conflict: the pick is aborted, the branch stays as it was, and conflict is true.
func pick(ctx context.Context, wt, commit string) (conflict bool, err error) {
	args := append(gitsafe.Identity(ctx, wt), "cherry-pick", "--allow-empty", "--keep-redundant-commits", commit)
	if _, err := gitsafe.Run(ctx, wt, args...); err != nil {
		var ge *gitsafe.Error
		if !errors.As(err, &ge) {
			return false, err
		}
		if _, aerr := gitsafe.Run(ctx, wt, "cherry-pick", "--abort"); aerr != nil {
			return false, errors.Join(err, aerr)
		}
		return true, nil
	}
	return false, nil
}

// refCommit is the commit ref points at, "" when there is no such ref.
func refCommit(ctx context.Context, root, ref string) string {
	out, err := gitsafe.Run(ctx, root, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// deleteItemRefs drops every item ref of run id.
func (g *repo) deleteItemRefs(ctx context.Context, id string) error {
	out, err := gitsafe.Run(ctx, g.Root(), "for-each-ref", "--format=%(refname)", itemRefPrefix+id+"/")
	if err != nil {
		return err
	}
	var errs []error
	for _, ref := range strings.Fields(out) {
		if _, err := g.locked(ctx, g.Root(), "update-ref", "-d", ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
