package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/untrusted"
)

// narrowFlags is how a user narrows a file mode's input, for advice.
const narrowFlags = "--lines or --symbol"

// hardFileCap bounds a file read for --lines: the span goes through the input budget, but the
// whole file is still read to write it back.
const hardFileCap = 64 << 20

// fileScope is a file read for a mode, and the span of it the mode works on.
type fileScope struct {
	path, display string
	text          Text
	rng           LineRange
}

func (s *fileScope) span() []string { return s.text.Lines[s.rng.Start-1 : s.rng.End] }

// scopeFile reads the file a mode works on and resolves its span: lines, a Go symbol, or the
// whole file. Without a span the whole file goes into the prompt, so it is measured against the
// input budget on disk, before it is read.
func scopeFile(r *Run, cwd, root, file, lines, symbol string) (*fileScope, error) {
	if lines != "" && symbol != "" {
		return nil, &BadInputError{Reason: "--lines and --symbol both name the span: give one"}
	}
	path, display, err := resolveInRoot(cwd, root, file)
	if err != nil {
		return nil, err
	}
	limit := int64(hardFileCap)
	if lines == "" && symbol == "" {
		limit = r.Spec.Settings.Int("max_input_bytes")
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
	sc := &fileScope{path: path, display: display, text: SplitText(string(data))}
	sc.rng = LineRange{Start: 1, End: len(sc.text.Lines)}
	switch {
	case symbol != "":
		if sc.rng, err = SymbolRange(display, data, symbol); err != nil {
			return nil, err
		}
		r.Detail("symbol", strings.TrimSpace(symbol))
	case lines != "":
		if sc.rng, err = ParseLineRange(lines); err != nil {
			return nil, err
		}
		if sc.rng, err = sc.rng.Within(len(sc.text.Lines)); err != nil {
			return nil, err
		}
	}
	r.Detail("file", display)
	r.Detail("lines", sc.rng.String())
	return sc, nil
}

func promptBytes(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
	}
	return n
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
		return "", "", &BadInputError{Reason: fmt.Sprintf("%s: %s; locum edits files of this repository only", untrusted.Escape(file), what)}
	}
	return real, filepath.ToSlash(rel), nil
}

var languages = map[string]string{
	".go": "Go", ".py": "Python", ".js": "JavaScript", ".ts": "TypeScript", ".tsx": "TypeScript", ".jsx": "JavaScript",
	".rs": "Rust", ".java": "Java", ".c": "C", ".h": "C", ".cc": "C++", ".cpp": "C++", ".hpp": "C++", ".rb": "Ruby",
	".sh": "shell", ".bash": "shell", ".md": "Markdown", ".json": "JSON", ".yaml": "YAML", ".yml": "YAML", ".toml": "TOML",
	".sql": "SQL", ".html": "HTML", ".css": "CSS", ".kt": "Kotlin", ".swift": "Swift", ".cs": "C#", ".php": "PHP", ".txt": "text",
}

func language(name string) string {
	if l, ok := languages[strings.ToLower(filepath.Ext(name))]; ok {
		return l
	}
	return "plain text"
}
