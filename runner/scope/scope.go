// Package scope is what the file modes share: the file a mode works on read under the rails and
// the span of it resolved (lines, a Go symbol, or the whole file), the file's text with each
// line's own ending, and the fenced blocks of a reply. It imports the client and the engine and
// no mode.
package scope

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// NarrowSettings is how a user narrows a file mode's input, for advice, as a template whose
// settings each front end names its own way (rails.Words).
const NarrowSettings = "{lines} or {symbol}"

// hardFileCap bounds a file read for --lines: the span goes through the input budget, but the
// whole file is still read to write it back.
const hardFileCap = 64 << 20

// File is a file read for a mode, and the span of it the mode works on.
type File struct {
	Path, Display string
	Text          Text
	Range         LineRange
	// Symbol is the declaration that named the span, "" where none did.
	Symbol string
}

// Details are the file and span as a mode's details name them.
func (s *File) Details() engine.SpanDetails {
	return engine.SpanDetails{File: s.Display, Lines: s.Range.String(), Symbol: s.Symbol}
}

// Span is the lines the mode works on.
func (s *File) Span() []string { return s.Text.Lines[s.Range.Start-1 : s.Range.End] }

// Read reads the file a mode works on and resolves its span: lines, a Go symbol, or the
// whole file. Without a span the whole file goes into the prompt, so it is measured against the
// input budget on disk, before it is read.
func Read(r *engine.Run, cwd, root, file, lines, symbol string) (*File, error) {
	if lines != "" && symbol != "" {
		return nil, engine.BadInputf("{lines} and {symbol} both name the span: give one")
	}
	edits := false
	if m, ok := engine.LookupMode(r.Spec.Mode); ok {
		edits = m.EditsInPlace
	}
	if edits {
		if err := notGit(cwd, root, file); err != nil {
			return nil, err
		}
	}
	path, display, err := resolveInRoot(cwd, root, file)
	if err != nil {
		return nil, err
	}
	if edits {
		if err := realNotGit(root, path, file); err != nil {
			return nil, err
		}
		// An edit of a file of several hard links is written in place: each must be a name
		// in the tree outside its git directories.
		if err := rails.CheckLinks(root, path, display); err != nil {
			return nil, err
		}
	}
	limit := int64(hardFileCap)
	if lines == "" && symbol == "" {
		limit = r.Spec.Settings.Int(packs.MaxInputBytes)
	}
	data, err := rails.ReadTextFile(path, limit)
	if err != nil {
		var be *rails.BudgetError
		if errors.As(err, &be) {
			be.What = display
		}
		var fe *rails.FileError
		if errors.As(err, &fe) {
			fe.Path = display
		}
		return nil, err
	}
	// What a red run handed over on this file is measured before this run changes it.
	r.MeasureHandoffs(display, edits)
	sc := &File{Path: path, Display: display, Text: SplitText(string(data))}
	sc.Range = LineRange{Start: 1, End: len(sc.Text.Lines)}
	switch {
	case symbol != "":
		if sc.Range, err = SymbolRange(display, data, symbol); err != nil {
			return nil, err
		}
		sc.Symbol = strings.TrimSpace(symbol)
	case lines != "":
		if sc.Range, err = ParseLineRange(lines); err != nil {
			return nil, err
		}
		if sc.Range, err = sc.Range.Within(len(sc.Text.Lines)); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// Tail is the end of a file a mode reads (ReadTail): its last lines, numbered as the file
// numbers them.
type Tail struct {
	Path, Display string
	// Lines are the lines read, without their endings; Lines[0] is the file's line First.
	Lines []string
	First int
	// Total is how many lines the file has, Size how many bytes.
	Total int
	Size  int64
	// Cut says the lines asked for are over the input budget: Lines are the last of them that
	// fit under it.
	Cut bool
}

// ReadTail reads the last n lines of a file of the repository, or every line where n is 0, under
// the input budget: the file's end is read back from its size (rails.ReadTextTail), so a log of
// any size is read no further than the budget, and a tail over it comes back Cut. The file is
// read, never edited.
func ReadTail(r *engine.Run, cwd, root, file string, n int) (*Tail, error) {
	path, display, err := resolveInRoot(cwd, root, file)
	if err != nil {
		return nil, err
	}
	t, err := rails.ReadTextTail(path, n, r.Spec.Settings.Int(packs.MaxInputBytes))
	if err != nil {
		var fe *rails.FileError
		if errors.As(err, &fe) {
			fe.Path = display
		}
		return nil, err
	}
	r.MeasureHandoffs(display, false)
	return &Tail{Path: path, Display: display, Lines: SplitText(string(t.Data)).Lines, First: t.First, Total: t.Lines, Size: t.Size, Cut: t.Cut}, nil
}

// PromptBytes is the size of a prompt as the input budget counts it.
func PromptBytes(msgs []client.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n
}

// notGit refuses a file to edit whose name, as given, puts it in a git directory: .git/config,
// ./x/../.git/config, .GIT/config, a .git file, sub/.git/hooks/pre-commit. The name is checked
// before anything is resolved, since under a worktree's .git file such a path names nothing.
func notGit(cwd, root, file string) error {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	rel, err := filepath.Rel(filepath.Clean(root), filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return nil // outside the repository: resolveInRoot words that
	}
	if gitsafe.NamesGitDir(rel) {
		return &gitsafe.GitDirError{Path: file, Dir: firstGitName(rel)}
	}
	return nil
}

// realNotGit refuses a file to edit that, its links resolved, lies in a git directory: through a
// symbolic link into .git, in the directory a .git file names, or in any directory git would
// take for one.
func realNotGit(root, real, file string) error {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if dir, ok := gitsafe.GitDir(realRoot, real); ok {
		shown := dir
		if rel, err := filepath.Rel(realRoot, dir); err == nil && filepath.IsLocal(rel) {
			shown = filepath.ToSlash(rel)
		}
		return &gitsafe.GitDirError{Path: file, Dir: shown}
	}
	return nil
}

// firstGitName is rel up to its first component named as .git.
func firstGitName(rel string) string {
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts {
		if gitsafe.IsGitName(part) {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return rel
}

// resolveInRoot resolves a file the user named, refusing one that is missing, not a regular
// file, or (after symbolic links) outside the repository.
func resolveInRoot(cwd, root, file string) (abs, display string, err error) {
	p := file
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	st, err := os.Lstat(p)
	if err != nil {
		return "", "", &rails.FileError{Path: file, Reason: "no such file"}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", "", &rails.FileError{Path: file, Reason: "a symbolic link to nothing"}
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", "", err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || !filepath.IsLocal(rel) {
		what := "outside the repository"
		if st.Mode()&os.ModeSymlink != 0 {
			what = "a symbolic link out of the repository (to " + untrusted.Escape(real) + ")"
		}
		return "", "", &engine.BadInputError{Reason: fmt.Sprintf("%s: %s; locum edits files of this repository only", untrusted.Escape(file), what)}
	}
	return real, filepath.ToSlash(rel), nil
}

var languages = map[string]string{
	".go": "Go", ".py": "Python", ".pyi": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".cjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".mts": "TypeScript", ".cts": "TypeScript", ".tsx": "TypeScript",
	".rs": "Rust", ".java": "Java", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".rb": "Ruby",
	".sh": "shell", ".bash": "shell", ".md": "Markdown", ".json": "JSON", ".yaml": "YAML", ".yml": "YAML", ".toml": "TOML",
	".sql": "SQL", ".html": "HTML", ".css": "CSS", ".kt": "Kotlin", ".swift": "Swift", ".cs": "C#", ".php": "PHP", ".txt": "text",
}

// Language names a file's language for a prompt, by its extension.
func Language(name string) string {
	if l, ok := languages[strings.ToLower(filepath.Ext(name))]; ok {
		return l
	}
	return "plain text"
}
