package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
)

// A verify runs in the worktree and may write there: build output and caches, but also the files
// a commit takes. What it judges is the tree it starts on; what it leaves is its output, not the
// run's work. So after every verify (the baseline, run_verify, the gate after finish) each file a
// commit could take is put back as it was before the verify ran: a file the tools wrote holds the
// tools' bytes and mode again, every other file git tracks holds the base commit's, and a file the
// verify created where git sees it (not ignored) is removed. Ignored files (build output, caches)
// stay. The tools never build on the verify's bytes, and the branch holds only what the tools
// wrote, on a tree the gate's verify started from exactly (for every file a commit takes). The
// gate is not run again: its verdict is on that tree already, and a verify that writes would
// change it again and never settle. Ending such a run red instead would fail every verify that
// formats or generates on its way to a verdict, for bytes that never reach the branch.

// written is what the tools last wrote to a file.
type written struct {
	data []byte
	mode os.FileMode
}

// maxSettlePasses bounds how often settle looks again: putting a file back can show git more (a
// .gitignore the verify rewrote hid what it created).
const maxSettlePasses = 4

// settle puts back what the verify that just ran changed of the files a commit could take, and
// returns their names, sorted; after is what ran ("baseline", "run_verify", "verify"). It fails
// where it cannot, and then the run must stop: the tree is no longer the tools' work.
func (a *agent) settle(ctx context.Context, r *engine.Run, after string) ([]string, error) {
	put := map[string]bool{}
	for pass := 0; ; pass++ {
		n, err := a.settlePass(ctx, put)
		if err != nil {
			return nil, a.verifyWrote(put, err)
		}
		if n == 0 {
			break
		}
		if pass+1 == maxSettlePasses {
			return nil, a.verifyWrote(put, fmt.Errorf("the tree still differs after %d passes", maxSettlePasses))
		}
	}
	files := make([]string, 0, len(put))
	for f := range put {
		files = append(files, f)
		a.undone[f] = true
	}
	slices.Sort(files)
	if len(files) > 0 {
		r.Emit(engine.VerifyUndoneEvent{After: after, Files: files})
		a.d.VerifyUndone = a.undoneList()
	}
	return files, nil
}

func (a *agent) verifyWrote(put map[string]bool, cause error) error {
	var files []string
	for f := range put {
		files = append(files, f)
	}
	slices.Sort(files)
	return &stop{status: StatusVerifyFailed, err: errors.Join(&engine.VerifyWroteError{Command: a.opts.Verify, Files: files},
		fmt.Errorf("locum could not put the worktree back as the tools left it: %w", cause))}
}

func (a *agent) undoneList() []string {
	out := make([]string, 0, len(a.undone))
	for f := range a.undone {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// settlePass makes one pass: the tools' files first, then whatever git sees changed. It returns
// how many paths it put back.
func (a *agent) settlePass(ctx context.Context, put map[string]bool) (int, error) {
	w := a.ws
	n := 0
	for _, rel := range slices.Sorted(maps.Keys(w.wrote)) {
		if w.holds(rel) {
			continue
		}
		if err := w.putBack(rel); err != nil {
			return n, err
		}
		put[rel] = true
		n++
	}
	// A .gitignore the verify created that ignores itself (a "*") would hide from status all
	// else it created, and one ignored .gitattributes could change what the commit makes of the
	// tools' bytes: neither comes from the checkout, so neither is left.
	hidden, err := gitsafe.Run(ctx, w.root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--", ":(glob)**/.gitignore", ":(glob)**/.gitattributes")
	if err != nil {
		return n, err
	}
	for _, rel := range strings.Split(hidden, "\x00") {
		if _, ok := w.wrote[rel]; ok || rel == "" {
			continue
		}
		if err := w.removeUntracked(rel); err != nil {
			return n, err
		}
		put[rel] = true
		n++
	}
	entries, err := status(ctx, w.root)
	if err != nil {
		return n, err
	}
	var checkout []string
	index := false
	for _, e := range entries {
		if _, ok := w.wrote[e.path]; ok {
			continue
		}
		switch {
		case e.xy == "??":
			if err := w.removeUntracked(e.path); err != nil {
				return n, err
			}
		case e.xy[0] != ' ':
			// Only a verify outside the sandbox can reach the index (the sandbox keeps the git
			// directory read-only); the run itself stages nothing before its commit.
			index = true
			checkout = append(checkout, e.path)
		default:
			checkout = append(checkout, e.path)
		}
		// A file git shows changed straight after the checkout (line endings its attributes
		// would normalise) is checked out again, and is no change of the verify's unless its
		// state changed.
		if a.noise[e.path] != e.xy {
			put[e.path] = true
			n++
		}
	}
	if index {
		if _, err := gitsafe.Run(ctx, w.root, "read-tree", a.base); err != nil {
			return n, err
		}
	}
	if len(checkout) > 0 {
		if _, err := gitsafe.Run(ctx, w.root, append([]string{"checkout-index", "-f", "-q", "--"}, checkout...)...); err != nil {
			return n, err
		}
	}
	return n, nil
}

// entry is one path git status shows: its two status letters and its path, relative to the root
// of the worktree ("??" for an untracked one; a folder git does not go into, such as a nested
// repository, without its trailing slash).
type entry struct{ xy, path string }

// status is what git sees changed in the worktree at dir, ignored files and submodules left out.
func status(ctx context.Context, dir string) ([]entry, error) {
	out, err := gitsafe.Run(ctx, dir, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", "--ignore-submodules=all")
	if err != nil {
		return nil, err
	}
	var entries []entry
	for _, e := range strings.Split(out, "\x00") {
		if len(e) >= 4 {
			entries = append(entries, entry{xy: e[:2], path: strings.TrimSuffix(e[3:], "/")})
		}
	}
	return entries, nil
}

// holds reports whether the tools' file rel is a regular file with exactly what they wrote.
func (w *workspace) holds(rel string) bool {
	want := w.wrote[rel]
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if again, _, err := w.resolve(rel); err != nil || again != abs {
		return false
	}
	st, err := os.Lstat(abs)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != want.mode.Perm() {
		return false
	}
	data, err := os.ReadFile(abs)
	return err == nil && bytes.Equal(data, want.data)
}

// putBack writes the tools' bytes and mode to rel again. A folder of its path that the verify
// replaced (with a file, or a link that leads elsewhere) is removed and made again, and a
// folder in the file's own place is removed: the worktree is locum's, and none of them is the
// tools' work.
func (w *workspace) putBack(rel string) error {
	want := w.wrote[rel]
	dir := w.root
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		st, err := os.Lstat(dir)
		if err == nil && !st.IsDir() {
			if err := os.Remove(dir); err != nil {
				return err
			}
			err = fs.ErrNotExist
		}
		if errors.Is(err, fs.ErrNotExist) {
			err = os.Mkdir(dir, 0o755)
		}
		if err != nil {
			return err
		}
	}
	abs := filepath.Join(dir, parts[len(parts)-1])
	if st, err := os.Lstat(abs); err == nil && st.IsDir() {
		if err := os.RemoveAll(abs); err != nil {
			return err
		}
	}
	return atomicfile.Write(abs, want.data, want.mode)
}

// removeUntracked removes a file or folder the verify created where git sees it. Git names no
// path through a link, but the folder above it is checked again before anything is removed.
func (w *workspace) removeUntracked(rel string) error {
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("git named %q, outside the worktree", rel)
	}
	abs := filepath.Join(w.root, filepath.FromSlash(rel))
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err != nil || real != filepath.Dir(abs) {
		return fmt.Errorf("%s is no longer where git saw it", rel)
	}
	return os.RemoveAll(abs)
}
