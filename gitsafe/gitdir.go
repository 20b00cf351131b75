package gitsafe

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// GitDirError is a file a mode was asked to write that lies in a git directory (or is a .git
// file). git reads its config and hooks there and runs what they name, so an edit there would
// make git run a program at the next git command: no mode writes under a git directory, however
// the path is spelled. A refusal.
type GitDirError struct {
	// Path is the file as it was named; Dir the git directory it is in, or the .git it is.
	Path, Dir string
}

func (e *GitDirError) Error() string {
	return fmt.Sprintf("%s is inside the git directory %s, where git reads its config and hooks and would run what an edit there names; locum writes no file under a git directory",
		untrusted.Escape(e.Path), untrusted.Escape(e.Dir))
}

// hfsIgnored are the code points HFS+ leaves out of a name when it compares two, so that
// ".g\u200cit" is ".git" there (git's own is_hfs_dotgit skips the same).
var hfsIgnored = strings.NewReplacer(
	"\u200c", "", "\u200d", "", "\u200e", "", "\u200f", "",
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u206a", "", "\u206b", "", "\u206c", "", "\u206d", "", "\u206e", "", "\u206f", "",
	"\ufeff", "",
)

// IsGitName reports whether name, one component of a path, is one some file system takes for
// ".git": in any letter case (macOS and Windows compare names so), with the code points HFS+
// ignores, with the dots and spaces NTFS drops from a name's end or an alternate stream after a
// colon, or as NTFS's short name git~1.
func IsGitName(name string) bool {
	n := strings.ToLower(hfsIgnored.Replace(name))
	if i := strings.IndexByte(n, ':'); i >= 0 {
		n = n[:i]
	}
	n = strings.TrimRight(n, ". ")
	return n == ".git" || n == "git~1"
}

// GitDir reports the git directory path lies in, if any. root is the tree's root and path a
// file in it (it need not exist yet), both with their symbolic links resolved: a component named
// as .git (IsGitName), the directory a .git file at the root names, or a directory on the way
// that git would take for a git directory (a HEAD with objects or commondir beside it), counting
// path itself as there, so a write cannot complete one.
func GitDir(root, path string) (string, bool) {
	rel, err := filepath.Rel(root, path)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	if named, ok := gitFileTarget(root); ok {
		if r, err := filepath.Rel(named, path); err == nil && filepath.IsLocal(r) {
			return named, true
		}
	}
	dir := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		dir = filepath.Join(dir, part)
		if IsGitName(part) || dir != path && isGitDir(dir, path) {
			return dir, true
		}
	}
	return "", false
}

// NamesGitDir reports whether a path, as spelled (before any link is followed), has a component
// named as .git: such a path is refused even where nothing is there, as under a worktree's .git
// file.
func NamesGitDir(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Clean(path)), "/") {
		if IsGitName(part) {
			return true
		}
	}
	return false
}

// gitFileTarget is the directory a .git file at root names ("gitdir: DIR"), its links resolved.
func gitFileTarget(root string) (string, bool) {
	data, err := untrusted.ReadFileIn(root, filepath.Join(root, ".git"), 4096)
	if err != nil {
		return "", false
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	if !ok {
		return "", false
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(root, target)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		return "", false
	}
	return real, true
}

// isGitDir reports whether git would take dir for a git directory once path is written: a HEAD,
// and objects or a commondir naming where they are.
func isGitDir(dir, path string) bool {
	exists := func(name string) bool {
		p := filepath.Join(dir, name)
		if p == path || strings.HasPrefix(path, p+string(filepath.Separator)) {
			return true
		}
		_, err := os.Lstat(p)
		return err == nil
	}
	return exists("HEAD") && (exists("objects") || exists("commondir"))
}
