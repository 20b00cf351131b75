//go:build unix

package rails

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/locumdev/locum/untrusted"
)

// gitScanLimit bounds the entries of a tree read to find its git directories, before a command
// runs and again after: a tree larger than this cannot be shown free of a git directory the
// command made, so the command does not run in it.
const gitScanLimit = 1 << 20

// gitFileCap bounds what is read of a .git file or a commondir file; git's own are one line.
const gitFileCap = 4096

// gitEntry is a git directory, or a .git file or link, found in a tree.
type gitEntry struct {
	mode fs.FileMode // its type
	// ino and born tell one made in its place (an inode is soon used again).
	ino    uint64
	born   string
	target string // a symbolic link's
}

// gitScan is what a tree held that git would take for a git directory: every entry named .git
// (a directory, a file naming one, or a link), and every other directory below the tree's root
// that looks like one to git's discovery (a HEAD beside objects and refs, or beside a
// commondir). A directory found is not read further.
type gitScan struct {
	tree    string
	entries map[string]gitEntry // by path relative to the tree
	// unreadable are the directories that could not be listed, by path relative to the tree.
	unreadable map[string]bool
}

// TreeTooLargeError is a tree with more entries than locum reads to find its git directories.
type TreeTooLargeError struct {
	Tree  string
	Limit int
}

func (e *TreeTooLargeError) Error() string {
	return fmt.Sprintf("the tree %s holds more than %d entries, more than locum reads to show that a verify made no git directory in it; the verify was not run",
		untrusted.Escape(e.Tree), e.Limit)
}

// scanGit finds the git directories of tree, a real path.
func scanGit(tree string) (*gitScan, error) {
	s := &gitScan{tree: tree, entries: map[string]gitEntry{}, unreadable: map[string]bool{}}
	seen := 0
	stack := []string{"."}
	for len(stack) > 0 {
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		// Only directories are pushed, as the listing typed them without following a link.
		f, err := os.Open(filepath.Join(tree, rel))
		if err != nil {
			s.unreadable[rel] = true
			continue
		}
		ents, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			s.unreadable[rel] = true
			continue
		}
		if seen += len(ents); seen > gitScanLimit {
			return nil, &TreeTooLargeError{Tree: tree, Limit: gitScanLimit}
		}
		if rel != "." && looksLikeGitDir(ents) {
			s.add(rel)
			continue
		}
		for _, e := range ents {
			child := filepath.Join(rel, e.Name())
			switch {
			case e.Name() == ".git":
				s.add(child)
			case e.IsDir():
				stack = append(stack, child)
			}
		}
	}
	return s, nil
}

// looksLikeGitDir says git's discovery would take a directory so listed for a git directory: a
// HEAD, and objects and refs or a commondir naming where they are.
func looksLikeGitDir(ents []fs.DirEntry) bool {
	has := map[string]bool{}
	for _, e := range ents {
		switch e.Name() {
		case "HEAD", "objects", "refs", "commondir":
			has[e.Name()] = true
		}
	}
	return has["HEAD"] && (has["commondir"] || has["objects"] && has["refs"])
}

func (s *gitScan) add(rel string) {
	full := filepath.Join(s.tree, rel)
	st, err := os.Lstat(full)
	if err != nil {
		return
	}
	e := gitEntry{mode: st.Mode().Type()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		e.ino = uint64(sys.Ino)
	}
	if e.mode == fs.ModeSymlink {
		e.target, _ = os.Readlink(full)
	}
	e.born = birthTime(full)
	s.entries[rel] = e
}

// readOnly are the paths to keep read-only in the sandbox for the git directories found: each
// one, the git directory a .git file or link leads to and the common directory a commondir names,
// where they lie inside a tree the command may write (elsewhere they are read-only already, and a
// hostile .git file naming /dev must not get the host's /dev bound into the sandbox). A .git link
// itself cannot be a mount point: after the command, a changed one is put back (planted).
func (s *gitScan) readOnly(trees []string) []string {
	var out []string
	keep := func(real string) {
		if slices.ContainsFunc(trees, func(t string) bool { return untrusted.Inside(t, real) }) && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	for _, rel := range sortedKeys(s.entries) {
		e := s.entries[rel]
		full := filepath.Join(s.tree, rel)
		if e.mode != fs.ModeSymlink {
			keep(full)
		}
		real, err := filepath.EvalSymlinks(full)
		if err != nil {
			continue
		}
		st, err := os.Stat(real)
		if err != nil {
			continue
		}
		keep(real)
		gitDir := real
		if st.Mode().IsRegular() {
			if gitDir = pointedDir(real, "gitdir:"); gitDir == "" {
				continue
			}
			keep(gitDir)
		}
		if common := pointedDir(filepath.Join(gitDir, "commondir"), ""); common != "" {
			keep(common)
		}
	}
	return out
}

// pointedDir reads the directory a git file names ("gitdir: PATH" in a .git file, a bare PATH in
// commondir), relative to the file's own directory, resolved; "" when there is none.
func pointedDir(file, prefix string) string {
	data, err := untrusted.ReadFile(file, gitFileCap)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(data), "\n")
	p, ok := strings.CutPrefix(strings.TrimRight(line, " \t\r"), prefix)
	if p = strings.TrimSpace(p); !ok || p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(file), p)
	}
	real, ok := realDir(p)
	if !ok {
		return ""
	}
	return real
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// PlantedGitError is a command that made a git directory in a tree it could write (a .git, or a
// directory git takes for one), changed a .git link, or left a directory locum cannot read to
// tell. Git obeys what a git directory holds (hooks, core.fsmonitor, filters) the next time
// anyone runs git there, as that person, outside any sandbox: the command's verdict is not
// trusted, and what it planted is removed.
type PlantedGitError struct {
	Tree string
	// Planted are the paths, relative to the tree, of what the command made; NotRemoved those of
	// them that could not be removed, with why.
	Planted, NotRemoved []string
	// Unchecked are directories it left that could not be read.
	Unchecked []string
}

func (e *PlantedGitError) Error() string {
	var b strings.Builder
	if len(e.Planted) > 0 {
		fmt.Fprintf(&b, "the verify made a git directory in %s (%s), which git would obey (hooks, fsmonitor, filters) the next time anyone runs git there: its verdict is not trusted",
			untrusted.Escape(e.Tree), escapeAll(e.Planted))
		if len(e.NotRemoved) == 0 {
			b.WriteString("; it was removed")
		} else {
			fmt.Fprintf(&b, "; remove it before running git there: %s", escapeAll(e.NotRemoved))
		}
	}
	if len(e.Unchecked) > 0 {
		if b.Len() > 0 {
			b.WriteString("; and it")
		} else {
			b.WriteString("the verify")
		}
		fmt.Fprintf(&b, " left directories in %s that cannot be read (%s), which could hide a git directory: its verdict is not trusted",
			untrusted.Escape(e.Tree), escapeAll(e.Unchecked))
	}
	return b.String()
}

func escapeAll(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = untrusted.Escape(p)
	}
	return strings.Join(out, ", ")
}

// planted compares the tree now with the scan before the command ran, removes every git
// directory it made (a changed .git link is put back as it was), and says what it found. It runs
// once every process the command started has ended.
func (s *gitScan) planted() error {
	after, err := scanGit(s.tree)
	if err != nil {
		return err
	}
	e := &PlantedGitError{Tree: s.tree}
	for _, rel := range sortedKeys(after.entries) {
		now := after.entries[rel]
		was, ok := s.entries[rel]
		if ok && sameGitEntry(was, now) {
			continue
		}
		e.Planted = append(e.Planted, rel)
		full := filepath.Join(s.tree, rel)
		if err := os.RemoveAll(full); err != nil {
			e.NotRemoved = append(e.NotRemoved, fmt.Sprintf("%s (%v)", rel, err))
			continue
		}
		if ok && was.mode == fs.ModeSymlink {
			if err := os.Symlink(was.target, full); err != nil {
				e.NotRemoved = append(e.NotRemoved, fmt.Sprintf("%s, a link to %s that could not be put back (%v)", rel, was.target, err))
			}
		}
	}
	// A .git link the command removed is put back: git would look further up without it.
	for _, rel := range sortedKeys(s.entries) {
		if was := s.entries[rel]; was.mode == fs.ModeSymlink {
			if _, ok := after.entries[rel]; !ok {
				e.Planted = append(e.Planted, rel)
				if err := os.Symlink(was.target, filepath.Join(s.tree, rel)); err != nil && !errors.Is(err, fs.ErrExist) {
					e.NotRemoved = append(e.NotRemoved, fmt.Sprintf("%s, a link to %s that could not be put back (%v)", rel, was.target, err))
				}
			}
		}
	}
	for _, rel := range sortedKeys(after.unreadable) {
		if !s.unreadable[rel] {
			e.Unchecked = append(e.Unchecked, rel)
		}
	}
	if len(e.Planted) == 0 && len(e.Unchecked) == 0 {
		return nil
	}
	return e
}

func sameGitEntry(a, b gitEntry) bool {
	if a.mode != b.mode {
		return false
	}
	if a.mode == fs.ModeSymlink {
		return a.target == b.target
	}
	return a.ino == b.ino && a.born == b.born
}
