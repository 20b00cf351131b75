package gitsafe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// GitPath returns what `git rev-parse --git-path rel` prints for the repository at root, without
// starting git: a path under the .git directory, or for a worktree or submodule under the
// directory its .git file points to. It returns "" when there is no git directory locum can
// trust to write in: the repository may have come as an archive with a .git of its own making.
// So a .git that is a link is not used; a .git file is used only when it points outside the
// working tree (never at a committed folder) to a directory with a HEAD; and the path returned
// stays inside the git directory after symbolic links. (Paths git shares between worktrees, such
// as refs/, are not asked for here.)
func GitPath(root, rel string) string {
	dir := trustedGitDir(root)
	if dir == "" {
		return ""
	}
	p, err := untrusted.Confine(dir, filepath.FromSlash(rel))
	if err != nil {
		return ""
	}
	return p
}

func trustedGitDir(root string) string {
	dotgit := filepath.Join(root, ".git")
	st, err := os.Lstat(dotgit)
	switch {
	case err != nil:
		return ""
	case st.IsDir():
		return dotgit
	case !st.Mode().IsRegular():
		return ""
	}
	data, err := untrusted.ReadFile(dotgit, 4096)
	if err != nil {
		return ""
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return ""
	}
	dir := strings.TrimSpace(target)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return ""
	}
	if realRoot, err := filepath.EvalSymlinks(root); err != nil {
		return ""
	} else if rel, err := filepath.Rel(realRoot, real); err == nil && filepath.IsLocal(rel) {
		return "" // a folder of the working tree: committed, not git's
	}
	if head, err := os.Lstat(filepath.Join(real, "HEAD")); err != nil || !head.Mode().IsRegular() {
		return ""
	}
	return real
}

// WorktreeDir is where run id's worktree lives: under the git directory, so the user's working
// tree never sees it. Where no such place stays inside a git directory locum trusts after
// symbolic links (a link planted at .git/locum, say), there is none: a checkout made, or a
// folder removed, by following it would land outside the repository.
func WorktreeDir(root, id string) (string, error) {
	// No link on the way at all, even one that stays inside: the folder is removed whole when
	// the run ends, and a link could name the git directory's own objects.
	p, gitDir := GitPath(root, "locum/worktrees/"+id), GitPath(root, ".")
	if p == "" || gitDir == "" || p != filepath.Join(gitDir, "locum", "worktrees", filepath.FromSlash(id)) {
		return "", &WorktreePlaceError{Root: root, ID: id}
	}
	return p, nil
}

// WorktreePlaceError is a repository with no place for a run's worktree that locum may write.
type WorktreePlaceError struct{ Root, ID string }

func (e *WorktreePlaceError) Error() string {
	return fmt.Sprintf("no place for the worktree of run %s: %s has no git directory with a locum/worktrees folder reached without a symbolic link", e.ID, e.Root)
}
