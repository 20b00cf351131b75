//go:build unix

package rails

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkGoCaches looks at the Go caches a sandboxed command wrote (dir is the repository's, see
// RepoCacheDir) once every process it started has ended, and removes what Go would not have put
// there: the caches outlive the command and stay writable to the repository's next verify, so a
// git directory planted in one would wait there for a link to it, or for anyone's git. The build
// cache is checked against Go's layout; the module cache, written only under the network, for
// git directories.
func checkGoCaches(dir string, network bool) error {
	var errs []error
	if e := checkBuildCache(filepath.Join(dir, "build")); e != nil {
		errs = append(errs, e)
	}
	if network {
		if e := checkModCache(filepath.Join(dir, "mod")); e != nil {
			errs = append(errs, e)
		}
	}
	return errors.Join(errs...)
}

// buildCacheFiles are the regular files Go keeps at the top of a build cache (cmd/go/internal/cache,
// and go clean's testexpire.txt and log.txt).
var buildCacheFiles = map[string]bool{"README": true, "trim.txt": true, "testexpire.txt": true, "log.txt": true}

// checkBuildCache holds the build cache at dir to Go's layout: the files of buildCacheFiles, the
// directories 00 to ff of Go's entries (regular files named for their hash, which begins with
// the directory's name, and -a or -d), and fuzz, the fuzzing corpora, a tree of directories and
// regular files of which none, fuzz included, is shaped like a git directory. Anything else is
// removed, and makes the command's verdict untrusted; a cache past the walk's bounds is removed
// whole (it is only a cache).
func checkBuildCache(dir string) *PlantedGitError {
	e := &PlantedGitError{Tree: dir, Cache: "build"}
	seen := 0
	stray := func(rel string) {
		e.collect(&e.Planted, rel)
		if err := forceRemove(filepath.Join(dir, rel)); err != nil {
			e.collect(&e.NotRemoved, rel+" ("+err.Error()+")")
		}
	}
	tooLarge := func(over *TreeTooLargeError) *PlantedGitError {
		e.TooLarge = over
		if err := forceRemove(dir); err != nil {
			e.collect(&e.NotRemoved, dir+" ("+err.Error()+")")
		}
		return e
	}
	over := &TreeTooLargeError{Tree: dir, Limit: gitWalkEntries, What: "entries"}
	err := eachEntry(dir, func(top fs.DirEntry) bool {
		if seen++; seen > gitWalkEntries {
			return false
		}
		name, t := top.Name(), top.Type()
		switch {
		case buildCacheFiles[name] && t.IsRegular():
		case isHexByte(name) && t.IsDir():
			err := eachEntry(filepath.Join(dir, name), func(ent fs.DirEntry) bool {
				if seen++; seen > gitWalkEntries {
					return false
				}
				if !ent.Type().IsRegular() || !isCacheEntry(name, ent.Name()) {
					stray(filepath.Join(name, ent.Name()))
				}
				return true
			})
			if err != nil {
				stray(name)
			}
		case name == "fuzz" && t.IsDir() && gitShaped(filepath.Join(dir, name)):
			stray(name)
		case name == "fuzz" && t.IsDir():
			w := &treeWalk{tree: filepath.Join(dir, name)}
			drop := func(rel string) error { stray(filepath.Join(name, rel)); return nil }
			w.gitDir, w.link, w.special = drop, drop, drop
			w.run()
			seen += w.seen
			if w.over != nil {
				return false
			}
			if w.unreadable.more > 0 {
				return false
			}
			for _, rel := range w.unreadable.names {
				stray(filepath.Join(name, rel))
			}
		default:
			stray(name)
		}
		return seen <= gitWalkEntries
	})
	switch {
	case errors.Is(err, errStopped):
		return tooLarge(over)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		// The cache's own directory cannot be read: it is removed, as it cannot be checked.
		e.collect(&e.Unchecked, ".")
		if err := forceRemove(dir); err != nil {
			e.collect(&e.NotRemoved, dir+" ("+err.Error()+")")
		}
		return e
	}
	if !e.found() {
		return nil
	}
	return e
}

// checkModCache removes every git directory in the module cache at dir, but for Go's own under
// cache/vcs: the bare repositories go clones a module into where it fetches one straight from
// its version control (GOPROXY=direct, GOPRIVATE), whose git config only the go command of this
// repository's own later verifies obeys, in their sandbox, as they already run the repository's
// code. A tree link into any of it is removed after each verify (see gitScan.planted). A module
// whose files hold a git directory's shape (a test fixture) loses it, and the verify that
// downloaded it is not trusted: git would take it for a git directory as well.
func checkModCache(dir string) *PlantedGitError {
	e := &PlantedGitError{Tree: dir, Cache: "mod"}
	w := &treeWalk{tree: dir, skip: filepath.Join("cache", "vcs")}
	w.gitDir = func(rel string) error {
		e.collect(&e.Planted, rel)
		if err := forceRemove(filepath.Join(dir, rel)); err != nil {
			e.collect(&e.NotRemoved, rel+" ("+err.Error()+")")
		}
		return nil
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	w.run()
	var over *TreeTooLargeError
	if errors.As(w.over, &over) || w.unreadable.more > 0 {
		// Past a bound, or too many directories it cannot read to name: the cache is removed whole.
		if over == nil {
			over = &TreeTooLargeError{Tree: dir, Limit: maxListed, What: "directories locum cannot read"}
		}
		e.TooLarge = over
		if err := forceRemove(dir); err != nil {
			e.collect(&e.NotRemoved, dir+" ("+err.Error()+")")
		}
	} else {
		for _, rel := range w.unreadable.names {
			e.collect(&e.Unchecked, rel)
			if err := forceRemove(filepath.Join(dir, rel)); err != nil {
				e.collect(&e.NotRemoved, rel+" ("+err.Error()+")")
			}
		}
	}
	if !e.found() {
		return nil
	}
	return e
}

// isCacheEntry says name is named as Go names an entry of the build cache's directory sub: a
// SHA-256 in hex that begins with sub, then -a (an action) or -d (an output).
func isCacheEntry(sub, name string) bool {
	id, ok := strings.CutSuffix(name, "-a")
	if !ok {
		id, ok = strings.CutSuffix(name, "-d")
	}
	return ok && len(id) == 64 && strings.HasPrefix(id, sub) && strings.Trim(id, "0123456789abcdef") == ""
}

// gitShaped says git's discovery would take the directory dir for a git directory (see gitShape).
// A directory that cannot be read, or holds more than a walk reads, is taken for one.
func gitShaped(dir string) bool {
	var shape gitShape
	seen := 0
	err := eachEntry(dir, func(e fs.DirEntry) bool {
		shape.note(e.Name())
		seen++
		return seen <= gitWalkEntries
	})
	return err != nil || shape.gitDir()
}

var errStopped = errors.New("stopped")

// eachEntry calls fn for each entry of the directory dir, a batch at a time; fn's false stops it
// (errStopped).
func eachEntry(dir string, fn func(fs.DirEntry) bool) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(512)
		for _, ent := range ents {
			if !fn(ent) {
				return errStopped
			}
		}
		if errors.Is(err, io.EOF) || err == nil && len(ents) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// isHexByte says name is one of Go's entry directories, 00 to ff.
func isHexByte(name string) bool {
	const digits = "0123456789abcdef"
	return len(name) == 2 && strings.IndexByte(digits, name[0]) >= 0 && strings.IndexByte(digits, name[1]) >= 0
}

// forceRemove removes p and all it holds, its owner's: a directory without write or search
// permission (the command may have taken them, or Go made it read-only) gets them back first.
func forceRemove(p string) error {
	if err := os.RemoveAll(p); err == nil {
		return nil
	}
	if parent, err := os.Stat(filepath.Dir(p)); err == nil {
		_ = os.Chmod(filepath.Dir(p), parent.Mode().Perm()|0o700)
	}
	var open func(string)
	open = func(d string) {
		st, err := os.Lstat(d)
		if err != nil || !st.IsDir() {
			return
		}
		_ = os.Chmod(d, st.Mode().Perm()|0o700)
		ents, _ := os.ReadDir(d)
		for _, ent := range ents {
			if ent.IsDir() {
				open(filepath.Join(d, ent.Name()))
			}
		}
	}
	open(p)
	return os.RemoveAll(p)
}
