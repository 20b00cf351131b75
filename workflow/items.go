package workflow

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/symbols"
	"github.com/locumdev/locum/untrusted"
)

// Bounds on what a for_each reads: the list is the repository's, so its size is not trusted.
const (
	// MaxItems is the most items one step runs over.
	MaxItems = 1000
	// maxListBytes bounds a file read for its lines or its declarations.
	maxListBytes = 4 << 20
)

// Item is one thing a step runs for: its key (stable, for the order of the combined branch and
// for a resume) and the names it gives the step's templates.
type Item struct {
	Key  string
	Vars map[string]string
}

// expand lists a step's items in the repository at root: the files a glob matches, the
// declarations of the files it matches that are of a language locum reads (test files left
// out; a declaration that holds others, such as a class with methods, runs as those others), or
// a file's non-blank lines. A step with no for_each has one item, named after the step.
func expand(root string, st packs.WorkflowStep, vars map[string]string) ([]Item, error) {
	if st.ForEach == nil {
		return []Item{{Key: st.Name, Vars: map[string]string{}}}, nil
	}
	kind, tmpl := st.ForEach.Kind()
	pattern, err := packs.Expand(tmpl, vars)
	if err != nil {
		return nil, engine.BadInputf("step %s: for_each %s: %v", st.Name, kind, err)
	}
	var items []Item
	switch kind {
	case "files", "symbols":
		files, err := globFiles(root, pattern)
		if err != nil {
			return nil, engine.BadInputf("step %s: for_each %s %q: %v", st.Name, kind, pattern, err)
		}
		for _, f := range files {
			if kind == "files" {
				items = append(items, Item{Key: f, Vars: map[string]string{"item": f, "file": f}})
				continue
			}
			if symbols.LanguageOf(f) == nil || symbols.IsTestFile(f) {
				continue
			}
			src, err := untrusted.ReadFileIn(root, filepath.Join(root, f), maxListBytes)
			if err != nil {
				return nil, engine.BadInputf("step %s: reading %s for its declarations: %v", st.Name, untrusted.Escape(f), err)
			}
			decls, err := scope.Symbols(f, src)
			if err != nil {
				return nil, engine.BadInputf("step %s: %v", st.Name, err)
			}
			for _, d := range decls {
				if d.Item {
					items = append(items, Item{Key: f + "#" + d.Name, Vars: map[string]string{"item": f + "#" + d.Name, "file": f, "symbol": d.Name}})
				}
			}
		}
	case "lines":
		data, err := untrusted.ReadFileIn(root, filepath.Join(root, filepath.FromSlash(pattern)), maxListBytes)
		if err != nil {
			return nil, engine.BadInputf("step %s: for_each lines %s: %v", st.Name, untrusted.Escape(pattern), err)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(data), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || seen[line] {
				continue
			}
			seen[line] = true
			items = append(items, Item{Key: line, Vars: map[string]string{"item": line, "line": line}})
		}
	}
	if len(items) > MaxItems {
		return nil, engine.BadInputf("step %s: for_each %s %q gives %d items, more than the %d a step runs over; narrow it", st.Name, kind, pattern, len(items), MaxItems)
	}
	if len(items) == 0 {
		return nil, engine.BadInputf("step %s: for_each %s %q gives no item", st.Name, kind, pattern)
	}
	return items, nil
}

// globFiles is the regular files under root that pattern matches (relative to root, with
// filepath.Match, * not crossing a /), sorted, each confined to root after its links resolve.
func globFiles(root, pattern string) ([]string, error) {
	pattern = filepath.Clean(filepath.FromSlash(pattern))
	if filepath.IsAbs(pattern) || pattern == ".." || strings.HasPrefix(pattern, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("the glob must name files inside the repository")
	}
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	matches, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		return nil, err
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		rel, err := filepath.Rel(root, m)
		if err != nil || strings.HasPrefix(rel, "..") || gitsafe.NamesGitDir(rel) {
			continue // a worktree's .git file matches * as any file does
		}
		real, err := untrusted.Confine(root, m)
		if err != nil {
			continue
		}
		if _, in := gitsafe.GitDir(realRoot, real); in {
			continue
		}
		st, err := os.Stat(real)
		if err != nil || !st.Mode().IsRegular() {
			continue
		}
		out = append(out, filepath.ToSlash(rel))
	}
	sort.Strings(out)
	return out, nil
}
