//go:build unix

package rails

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/locumdev/locum/untrusted"
)

// The bounds of a walk of a tree for its git directories, before a command runs and again after.
// The walk holds in memory only the directories it has still to read and the git directories it
// found, never a directory's whole listing, so what bounds it is time: a tree past a bound before
// the command is not run in, and one the command left past a bound cannot be shown free of a git
// directory it made. Reading takes about a second per million entries on a busy 2-core machine;
// making them takes the command far longer (hard links, which cost no inode, about 20 s a
// million), so a command cannot cheaply hide a git directory behind a tree too large to read.
var (
	// gitWalkEntries bounds the entries read.
	gitWalkEntries = 1 << 24
	// gitWalkDirs bounds the directories found and not yet read.
	gitWalkDirs = 1 << 20
	// gitWalkGitDirs bounds the git directories one tree holds.
	gitWalkGitDirs = 1 << 16
)

// maxListed bounds the paths an error names; it says how many more there were.
const maxListed = 20

// gitFileCap bounds what is read of a .git file or a commondir file; git's own are one line.
const gitFileCap = 4096

// gitEntry is a git directory, or a .git file or link, found in a tree.
type gitEntry struct {
	mode fs.FileMode // its type
	// ino and born tell one made in its place (an inode is soon used again).
	ino    uint64
	born   string
	target string // a symbolic link's
	// leadsTo is the git directory git would find through the entry, resolved: a directory's
	// own path, the directory a link leads to, or the one a .git file (or the file a link leads
	// to) names; "" where it leads nowhere. via is the file a .git link leads to, resolved,
	// where it leads to one.
	leadsTo, via string
}

// gitScan is what a tree held that git would take for a git directory: every entry named .git
// (a directory, a file naming one, or a link), and every other directory below the tree's root
// that looks like one to git's discovery (a HEAD beside objects and refs, or beside a
// commondir). A directory found is not read further.
type gitScan struct {
	tree    string
	entries map[string]gitEntry // by path relative to the tree
}

// TreeTooLargeError is a tree with more entries (or directories, or git directories) than locum
// reads to find its git directories, before the command ran.
type TreeTooLargeError struct {
	Tree  string
	Limit int
	What  string // "entries", "directories", "git directories"
}

func (e *TreeTooLargeError) Error() string {
	return fmt.Sprintf("the tree %s holds more than %d %s, more than locum reads to show that a verify made no git directory in it; the verify was not run",
		untrusted.Escape(e.Tree), e.Limit, e.What)
}

// UnreadableTreeError is a tree with directories locum cannot read, before the command ran: a git
// directory the command made inside one could not be found after it.
type UnreadableTreeError struct {
	Tree string
	Dirs []string // relative to the tree, at most maxListed
	More int      // how many more there were
}

func (e *UnreadableTreeError) Error() string {
	return fmt.Sprintf("locum cannot read %s in the tree %s, so it could not show that a verify made no git directory there; the verify was not run: make them readable to you (chmod u+rx) or remove them",
		listNames(e.Dirs, e.More), untrusted.Escape(e.Tree))
}

// listed collects paths for an error: the first maxListed, and a count of the rest.
type listed struct {
	names []string
	more  int
}

func (l *listed) add(name string) {
	if len(l.names) < maxListed {
		l.names = append(l.names, name)
	} else {
		l.more++
	}
}

func (l *listed) empty() bool { return len(l.names) == 0 }

func listNames(names []string, more int) string {
	s := escapeAll(names)
	if more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

// treeWalk reads a tree for what git would take for a git directory (see gitScan), calling
// gitDir for each, link for each other symbolic link, and special for each entry that is no
// directory, regular file or link. A callback's error stops the walk (over); so does a bound
// passed.
type treeWalk struct {
	tree                  string
	gitDir, link, special func(rel string) error
	// skip is a directory, relative to the tree, not to read.
	skip       string
	seen       int
	pending    []string // directories found and not yet read
	unreadable listed
	over       error
}

func (w *treeWalk) run() {
	w.pending = append(w.pending[:0], ".")
	for len(w.pending) > 0 && w.over == nil {
		rel := w.pending[len(w.pending)-1]
		w.pending = w.pending[:len(w.pending)-1]
		w.read(rel)
	}
}

func (w *treeWalk) tooLarge(limit int, what string) {
	w.over = &TreeTooLargeError{Tree: w.tree, Limit: limit, What: what}
}

// read lists the directory rel a batch at a time, calling back for what it holds, and queues its
// subdirectories unless it is itself a git directory.
func (w *treeWalk) read(rel string) {
	// Only directories are queued, as the listing typed them without following a link.
	f, err := os.Open(filepath.Join(w.tree, rel))
	if err != nil {
		w.unreadable.add(rel)
		return
	}
	defer f.Close()
	queued := len(w.pending)
	var shape gitShape
	dotGit := false
	for {
		ents, err := f.ReadDir(512)
		for _, e := range ents {
			if w.seen++; w.seen > gitWalkEntries {
				w.tooLarge(gitWalkEntries, "entries")
				return
			}
			name := e.Name()
			shape.note(name)
			child := filepath.Join(rel, name)
			switch t := e.Type(); {
			case name == ".git":
				dotGit = true
			case t.IsDir() && w.skip != "" && child == w.skip:
			case t.IsDir():
				if len(w.pending) >= gitWalkDirs {
					w.tooLarge(gitWalkDirs, "directories")
					return
				}
				w.pending = append(w.pending, child)
			case t == fs.ModeSymlink:
				w.call(w.link, child)
			case !t.IsRegular():
				w.call(w.special, child)
			}
			if w.over != nil {
				return
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(ents) == 0 {
			break
		}
		if err != nil {
			w.unreadable.add(rel)
			w.pending = w.pending[:queued]
			return
		}
	}
	switch {
	case rel != "." && shape.gitDir():
		w.pending = w.pending[:queued]
		w.call(w.gitDir, rel)
	case dotGit:
		w.call(w.gitDir, filepath.Join(rel, ".git"))
	}
}

func (w *treeWalk) call(fn func(string) error, rel string) {
	if fn == nil || w.over != nil {
		return
	}
	if err := fn(rel); err != nil {
		w.over = err
	}
}

// scanGit finds the git directories of tree, a real path. A tree past a bound, or with a
// directory locum cannot read, is an error: the command must not run in it.
func scanGit(tree string) (*gitScan, error) {
	s := &gitScan{tree: tree, entries: map[string]gitEntry{}}
	w := &treeWalk{tree: tree}
	w.gitDir = func(rel string) error {
		if len(s.entries) >= gitWalkGitDirs {
			return &TreeTooLargeError{Tree: tree, Limit: gitWalkGitDirs, What: "git directories"}
		}
		e, err := s.entry(rel)
		if err != nil {
			w.unreadable.add(rel)
			return nil
		}
		s.entries[rel] = e
		return nil
	}
	w.run()
	if w.over != nil {
		return nil, w.over
	}
	if !w.unreadable.empty() {
		return nil, &UnreadableTreeError{Tree: tree, Dirs: w.unreadable.names, More: w.unreadable.more}
	}
	return s, nil
}

// gitShape notes the names of a directory's entries that git's discovery looks for.
type gitShape struct{ head, objects, refs, commondir bool }

func (g *gitShape) note(name string) {
	switch name {
	case "HEAD":
		g.head = true
	case "objects":
		g.objects = true
	case "refs":
		g.refs = true
	case "commondir":
		g.commondir = true
	}
}

// gitDir says git's discovery would take the directory for a git directory: a HEAD, and objects
// and refs or a commondir naming where they are.
func (g gitShape) gitDir() bool { return g.head && (g.commondir || g.objects && g.refs) }

func (s *gitScan) entry(rel string) (gitEntry, error) {
	full := filepath.Join(s.tree, rel)
	st, err := os.Lstat(full)
	if err != nil {
		return gitEntry{}, err
	}
	e := gitEntry{mode: st.Mode().Type()}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		e.ino = uint64(sys.Ino)
	}
	if e.mode == fs.ModeSymlink {
		e.target, _ = os.Readlink(full)
	}
	e.born = birthTime(full)
	e.leadsTo, e.via = gitDirOf(full)
	return e, nil
}

// gitDirOf resolves the .git entry at full as git's discovery would: the directory it is or leads
// to, or the directory the file it is or leads to names (relative to full's own directory, as git
// reads it); and the file a link leads to, where it does.
func gitDirOf(full string) (leadsTo, via string) {
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", ""
	}
	st, err := os.Stat(real)
	switch {
	case err != nil:
		return "", ""
	case st.IsDir():
		return real, ""
	case !st.Mode().IsRegular():
		return "", ""
	}
	if real != full {
		via = real
	}
	return pointedDir(real, filepath.Dir(full), "gitdir:"), via
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
			if gitDir = pointedDir(real, filepath.Dir(full), "gitdir:"); gitDir == "" {
				continue
			}
			keep(gitDir)
		}
		if common := pointedDir(filepath.Join(gitDir, "commondir"), gitDir, ""); common != "" {
			keep(common)
		}
	}
	return out
}

// pointedDir reads the directory a git file names ("gitdir: PATH" in a .git file, a bare PATH in
// commondir), relative to base (the directory git found the file in), resolved; "" when there is
// none.
func pointedDir(file, base, prefix string) string {
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
		p = filepath.Join(base, p)
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

// PlantedGitError is a command that may have left a git directory where git would later obey it
// (its hooks, core.fsmonitor, filters), as whoever runs git there, outside any sandbox: it made
// one in a tree it could write (a .git, or a directory git takes for one) or changed a .git link;
// it left a symbolic link from the tree into a directory it may write outside it (a cache, where
// git run through the link would find what it planted there), or entries in its Go caches that
// Go does not make; or it left a tree locum cannot read to its end (a directory it cannot read,
// more entries than it reads). Its verdict is not trusted, and what it planted is removed.
type PlantedGitError struct {
	Tree string
	// Cache, when set, says Tree is the command's Go build cache ("build") or module cache
	// ("mod"), not a tree it judged: Planted are then the entries of it Go does not make.
	Cache string
	// Planted are the paths, relative to the tree, of what the command made; NotRemoved those of
	// them (and of Links) that could not be removed, with why.
	Planted, NotRemoved []string
	// Links are the symbolic links into a directory the command may write outside the tree, as
	// "PATH -> TARGET"; they were removed.
	Links []string
	// Unchecked are directories it left that could not be read.
	Unchecked []string
	// TooLarge is the bound the tree passed after the command: the rest of it was not read.
	TooLarge *TreeTooLargeError
	// More counts the paths left out of the lists above, each of which names at most maxListed.
	More int
}

func (e *PlantedGitError) Error() string {
	var parts []string
	tree := untrusted.Escape(e.Tree)
	if len(e.Planted) > 0 {
		removed := "it was removed"
		if len(e.Planted) > 1 || e.More > 0 {
			removed = "they were removed"
		}
		switch e.Cache {
		case "build":
			parts = append(parts, fmt.Sprintf("the verify left entries in its Go build cache %s that Go does not make (%s), where a git directory could wait for a link to it; %s",
				tree, escapeAll(e.Planted), removed))
		case "mod":
			parts = append(parts, fmt.Sprintf("the verify made a git directory in its Go module cache %s (%s), which git would obey the next time anyone runs git there; %s",
				tree, escapeAll(e.Planted), removed))
		default:
			parts = append(parts, fmt.Sprintf("the verify made a git directory in %s (%s), which git would obey (hooks, fsmonitor, filters) the next time anyone runs git there; %s",
				tree, escapeAll(e.Planted), removed))
		}
	}
	if len(e.Links) > 0 {
		parts = append(parts, fmt.Sprintf("the verify left symbolic links in %s into directories it may write outside the tree (%s), through which git would obey a git directory it planted there; they were removed",
			tree, escapeAll(e.Links)))
	}
	switch {
	case len(e.Unchecked) > 0 && e.Cache != "":
		parts = append(parts, fmt.Sprintf("the verify left directories in its Go cache %s that locum cannot read (%s); they were removed", tree, escapeAll(e.Unchecked)))
	case len(e.Unchecked) > 0:
		parts = append(parts, fmt.Sprintf("the verify left directories in %s that locum cannot read (%s), which could hide a git directory: look in them before running git there",
			tree, escapeAll(e.Unchecked)))
	}
	switch {
	case e.TooLarge != nil && e.Cache != "":
		parts = append(parts, fmt.Sprintf("the verify left more than %d %s in its Go cache %s, more than locum reads to check it; the cache was removed",
			e.TooLarge.Limit, e.TooLarge.What, tree))
	case e.TooLarge != nil:
		parts = append(parts, fmt.Sprintf("the verify left more than %d %s in %s, more than locum reads to look for a git directory it made: the tree may now hold git directories locum could not check; look for them (find %s -name .git, and directories holding HEAD, objects and refs) before running git there",
			e.TooLarge.Limit, e.TooLarge.What, tree, untrusted.Escape(shellQuote(e.Tree))))
	}
	if len(e.NotRemoved) > 0 {
		parts = append(parts, "these could not be removed; remove them before running git there: "+escapeAll(e.NotRemoved))
	}
	msg := strings.Join(parts, "; and ")
	if e.More > 0 {
		msg += fmt.Sprintf(" (and %d more paths not named)", e.More)
	}
	return msg + ": its verdict is not trusted"
}

func escapeAll(paths []string) string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = untrusted.Escape(p)
	}
	return strings.Join(out, ", ")
}

// collect adds a path to one of the error's lists, or counts it in More past maxListed.
func (e *PlantedGitError) collect(list *[]string, path string) {
	if len(*list) < maxListed {
		*list = append(*list, path)
	} else {
		e.More++
	}
}

func (e *PlantedGitError) found() bool {
	return len(e.Planted)+len(e.NotRemoved)+len(e.Links)+len(e.Unchecked) > 0 || e.TooLarge != nil
}

// planted reads the tree again once every process the command started has ended, removes every
// git directory it made (a changed .git link is put back as it was), and every symbolic link
// into fence, the directories it could write outside its trees; and says what it found. Every
// symbolic link is looked at, old or new: the command may have filled the directory an old link
// leads to.
func (s *gitScan) planted(fence []string) error {
	e := &PlantedGitError{Tree: s.tree}
	seen := map[string]bool{}
	w := &treeWalk{tree: s.tree}
	w.gitDir = func(rel string) error {
		now, err := s.entry(rel)
		if err != nil {
			e.collect(&e.Unchecked, rel)
			return nil
		}
		was, ok := s.entries[rel]
		if ok {
			seen[rel] = true
			if sameGitEntry(was, now) && !intoFence(now, fence) {
				return nil
			}
		}
		e.collect(&e.Planted, rel)
		full := filepath.Join(s.tree, rel)
		// The file a changed .git link now leads to goes as well: put back, the link would lead
		// to whatever it names.
		if now.via != "" && untrusted.Inside(s.tree, now.via) && now.via != filepath.Join(s.tree, rel) {
			if err := os.Remove(now.via); err != nil && !errors.Is(err, fs.ErrNotExist) {
				e.collect(&e.NotRemoved, fmt.Sprintf("%s, which %s leads to (%v)", now.via, rel, err))
			}
		}
		if err := os.RemoveAll(full); err != nil {
			e.collect(&e.NotRemoved, fmt.Sprintf("%s (%v)", rel, err))
			return nil
		}
		if ok && was.mode == fs.ModeSymlink {
			if err := os.Symlink(was.target, full); err != nil {
				e.collect(&e.NotRemoved, fmt.Sprintf("%s, a link to %s that could not be put back (%v)", rel, was.target, err))
			}
		}
		return nil
	}
	if len(fence) > 0 {
		w.link = func(rel string) error {
			full := filepath.Join(s.tree, rel)
			target, into := linkInto(full, fence)
			if !into {
				return nil
			}
			e.collect(&e.Links, rel+" -> "+target)
			if err := os.Remove(full); err != nil {
				e.collect(&e.NotRemoved, fmt.Sprintf("%s (%v)", rel, err))
			}
			return nil
		}
	}
	w.run()
	var tooLarge *TreeTooLargeError
	if errors.As(w.over, &tooLarge) {
		e.TooLarge = tooLarge
	}
	// A .git link the command removed is put back: git would look further up without it. Past a
	// bound, one not reached is still there.
	for _, rel := range sortedKeys(s.entries) {
		if was := s.entries[rel]; was.mode == fs.ModeSymlink && !seen[rel] {
			if _, err := os.Lstat(filepath.Join(s.tree, rel)); err == nil && e.TooLarge != nil {
				continue
			}
			e.collect(&e.Planted, rel)
			if err := os.Symlink(was.target, filepath.Join(s.tree, rel)); err != nil && !errors.Is(err, fs.ErrExist) {
				e.collect(&e.NotRemoved, fmt.Sprintf("%s, a link to %s that could not be put back (%v)", rel, was.target, err))
			}
		}
	}
	for _, rel := range w.unreadable.names {
		e.collect(&e.Unchecked, rel)
	}
	e.More += w.unreadable.more
	if !e.found() {
		return nil
	}
	return e
}

// linkInto says where the symbolic link at full leads, and whether that lies in one of fence (real
// paths): as written, made absolute, and resolved as far as it exists. Git's discovery walks up
// from the physical path it lands in, so anywhere below a directory of fence is in it.
func linkInto(full string, fence []string) (string, bool) {
	target, err := os.Readlink(full)
	if err != nil {
		return "", false
	}
	lexical := target
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(filepath.Dir(full), lexical)
	}
	in := func(p string) bool {
		return slices.ContainsFunc(fence, func(f string) bool { return untrusted.Inside(f, p) })
	}
	if in(filepath.Clean(lexical)) {
		return target, true
	}
	if real, ok := resolveExisting(full); ok && in(real) {
		return target, true
	}
	return target, false
}

// resolveExisting is p with its symbolic links resolved; where it leads nowhere, its target's
// deepest directory that exists, resolved, with the rest of the path after it.
func resolveExisting(p string) (string, bool) {
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real, true
	}
	target, err := os.Readlink(p)
	if err != nil {
		return "", false
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(filepath.Dir(p), target)
	}
	rest := ""
	for dir := filepath.Clean(target); ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(real, rest), true
		}
		if dir == filepath.Dir(dir) {
			return "", false
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}

// intoFence says the .git entry leads into fence, the directories the command could write
// outside its trees: what is there is the command's.
func intoFence(e gitEntry, fence []string) bool {
	return slices.ContainsFunc(fence, func(f string) bool {
		return e.leadsTo != "" && untrusted.Inside(f, e.leadsTo) || e.via != "" && untrusted.Inside(f, e.via)
	})
}

// sameGitEntry says b is the entry a was, leading where it led.
func sameGitEntry(a, b gitEntry) bool {
	if a.mode != b.mode || a.leadsTo != b.leadsTo || a.via != b.via {
		return false
	}
	if a.mode == fs.ModeSymlink {
		return a.target == b.target
	}
	return a.ino == b.ino && a.born == b.born
}
