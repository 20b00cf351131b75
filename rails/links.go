//go:build unix

package rails

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/untrusted"
)

// HardLinkError is a file of several hard links that locum cannot show are all names in the
// repository's tree outside its git directories. An edit of such a file is written in place, so
// that every name keeps one inode, and so reaches every name: one of them may be a file git reads
// and runs what it names (.git/config, a hook), which a repository shipped as an archive can
// link to a file of its tree, or a file outside the repository. A refusal, made before the file
// is written.
type HardLinkError struct {
	Path  string // the file, as named
	Links uint64 // its hard links
	Found int    // its names found in the tree outside a git directory, itself included
	// Why says why the tree was not searched to the end; "" where it was.
	Why string
}

func (e *HardLinkError) Error() string {
	where := fmt.Sprintf("only %d of them %s in the repository outside its git directories", e.Found, plural(e.Found, "is", "are"))
	if e.Why != "" {
		where = "locum could not look for all of them: " + e.Why
	}
	p := shellQuote(e.Path)
	return fmt.Sprintf("%s has %d hard links and %s; an edit is written in place, so it would reach every name of the file, and one may be a file git reads and runs what it names (such as .git/config) or one outside the repository. Break the link first, then run again: cp -p %s %s && mv %s %s",
		untrusted.Escape(e.Path), e.Links, where, untrusted.Escape(p), untrusted.Escape(shellQuote(e.Path+".unlinked")), untrusted.Escape(shellQuote(e.Path+".unlinked")), untrusted.Escape(p))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// CheckLinks refuses (*HardLinkError) the regular file at path, inside the repository at root,
// when it has more than one hard link and not every one is a name in root's tree outside its git
// directories: those are the files an edit written in place may reach. A file of one link passes
// without a look at the tree. shown is the file as the person named it.
func CheckLinks(root, path, shown string) error {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return nil // not a file to write in place; the writer says what it is
	}
	links := linksOf(st)
	if links <= 1 {
		return nil
	}
	found, err := linksInTree(root, idOf(st), links)
	if err != nil || uint64(found) < links {
		e := &HardLinkError{Path: shown, Links: links, Found: found}
		if err != nil {
			e.Why = err.Error()
		}
		return e
	}
	return nil
}

// linksInTree counts the names of the inode id in root's tree outside its git directories, up to
// want: the tree is walked without following a link, within its device (a hard link never leaves
// one), passing over every entry named as .git and every directory git would take for a git
// directory, and a name found is counted only where gitsafe.GitDir places it in none. A tree of
// more than gitScanLimit entries is an error, as is a root that cannot be read.
func linksInTree(root string, id fileID, want uint64) (int, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return 0, err
	}
	found, seen := 0, 0
	stack := []string{real}
	for len(stack) > 0 && uint64(found) < want {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		f, err := os.Open(dir)
		if err != nil {
			if dir == real {
				return 0, err
			}
			continue // a name in a folder locum cannot list is not one it can vouch for
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil && dir == real {
			return 0, err
		}
		if seen += len(ents); seen > gitWalkEntries {
			return found, fmt.Errorf("the tree holds more than %d entries", gitWalkEntries)
		}
		if dir != real && isGitShaped(ents) {
			continue
		}
		for _, e := range ents {
			if gitsafe.IsGitName(e.Name()) {
				continue
			}
			p := filepath.Join(dir, e.Name())
			switch {
			case e.IsDir():
				if st, err := os.Lstat(p); err == nil && idOf(st).dev == id.dev {
					stack = append(stack, p)
				}
			case e.Type().IsRegular():
				st, err := os.Lstat(p)
				if err != nil || idOf(st) != id {
					continue
				}
				if _, inGit := gitsafe.GitDir(real, p); !inGit {
					found++
				}
			}
		}
	}
	return found, nil
}

// inPlaceOK refuses to write in place the file at path, of more than one hard link (st), unless
// every one is a name in root's tree outside its git directories; with no root, it refuses.
func inPlaceOK(root, path string, st fs.FileInfo) error {
	if root == "" {
		return &HardLinkError{Path: path, Links: linksOf(st), Why: "no repository was named to look in"}
	}
	return CheckLinks(root, path, path)
}

// isGitShaped says git's discovery would take a directory of these entries for a git directory.
func isGitShaped(ents []os.DirEntry) bool {
	var g gitShape
	for _, e := range ents {
		g.note(e.Name())
	}
	return g.gitDir()
}
