package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/untrusted"
)

// The caps the tools work under. A file the model may read or write is at most maxFileBytes; all
// it writes in one run at most maxTotalWrite; one tool result it sees at most maxResult.
const (
	maxFileBytes  = 256 << 10
	maxTotalWrite = 4 << 20
	// maxCreated is how many new files one run may create: a task of the agent's size makes a
	// few; thousands of empty files are no task.
	maxCreated = 100
	maxResult  = 12 << 10
	maxDiff    = 2 << 10
	maxListed  = 400
	maxMatches = 200
	// grep reads at most this many files and bytes: a repository of any size answers in bounded
	// time, and says where it stopped.
	maxGrepFiles = 5000
	maxGrepBytes = 32 << 20
)

// Tools are the tools an agent run offers, with the argument names hosts and tests rely on.
var Tools = []client.Tool{
	{Name: "read_file", Description: "Read a text file of the repository, with line numbers. Read a file before you edit it.",
		Parameters: object(map[string]any{"path": str("path relative to the repository root"), "start_line": integer("first line, 1-based"), "end_line": integer("last line, inclusive")}, "path")},
	{Name: "list_dir", Description: "List a folder of the repository (folders end in /).",
		Parameters: object(map[string]any{"path": str("folder relative to the repository root; . for the root")}, "path")},
	{Name: "grep", Description: "Search the repository's text files for a regular expression (RE2 syntax).",
		Parameters: object(map[string]any{"pattern": str("regular expression"), "path": str("file or folder to search; default the whole repository")}, "pattern")},
	{Name: "edit_file", Description: "Replace one exact occurrence of search with replace in a file you have read. search must occur exactly once; copy it from read_file's output without the line numbers.",
		Parameters: object(map[string]any{"path": str("path relative to the repository root"), "search": str("exact text to replace, occurring once"), "replace": str("its replacement")}, "path", "search", "replace")},
	{Name: "write_file", Description: "Create a file, or replace a file you have read, with the whole content given.",
		Parameters: object(map[string]any{"path": str("path relative to the repository root"), "content": str("the whole new content")}, "path", "content")},
	{Name: "run_verify", Description: "Run the operator's verify command in the repository and see its exit code and the end of its output.",
		Parameters: object(map[string]any{})},
	{Name: "finish", Description: "Say the task is done. The verify command then judges the work.",
		Parameters: object(map[string]any{"summary": str("what you changed, in one or two sentences")}, "summary")},
}

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func str(doc string) map[string]any     { return map[string]any{"type": "string", "description": doc} }
func integer(doc string) map[string]any { return map[string]any{"type": "integer", "description": doc} }

func knownTool(name string) bool {
	for _, t := range Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// MalformedError is a tool call locum cannot run: an unknown tool, arguments that are not a JSON
// object, or a missing or mistyped argument.
type MalformedError struct{ Reason string }

func (e *MalformedError) Error() string { return e.Reason }

// BlockError is a guardrail refusing a well-formed call.
type BlockError struct {
	Rule   string // outside, dot_git, read_first, size, total_size, created, repeat, not_regular
	Reason string
}

func (e *BlockError) Error() string { return e.Reason }

// args is a tool call's arguments, decoded with no key named twice.
type args map[string]json.RawMessage

// ParseArgs decodes the arguments of a call to tool name and checks them against the tool's
// parameters: required ones present, every one of its declared type, no other.
func ParseArgs(name, text string) (args, error) {
	var spec *client.Tool
	for i := range Tools {
		if Tools[i].Name == name {
			spec = &Tools[i]
		}
	}
	if spec == nil {
		return nil, &MalformedError{Reason: fmt.Sprintf("there is no tool %q; the tools are read_file, list_dir, grep, edit_file, write_file, run_verify, finish", name)}
	}
	a := args{}
	if strings.TrimSpace(text) != "" {
		if err := untrusted.Unmarshal([]byte(text), &a); err != nil {
			return nil, &MalformedError{Reason: fmt.Sprintf("the arguments of %s are not a JSON object: %v", name, err)}
		}
	}
	props := spec.Parameters["properties"].(map[string]any)
	for k, v := range a {
		p, ok := props[k].(map[string]any)
		if !ok {
			return nil, &MalformedError{Reason: fmt.Sprintf("%s takes no argument %q", name, k)}
		}
		if string(v) == "null" {
			delete(a, k)
			continue
		}
		switch p["type"] {
		case "string":
			var s string
			if json.Unmarshal(v, &s) != nil {
				return nil, &MalformedError{Reason: fmt.Sprintf("argument %q of %s must be a string", k, name)}
			}
		case "integer":
			var n int
			if json.Unmarshal(v, &n) != nil {
				return nil, &MalformedError{Reason: fmt.Sprintf("argument %q of %s must be a whole number", k, name)}
			}
		}
	}
	req, _ := spec.Parameters["required"].([]string)
	for _, k := range req {
		if _, ok := a[k]; !ok {
			return nil, &MalformedError{Reason: fmt.Sprintf("%s needs the argument %q", name, k)}
		}
	}
	return a, nil
}

func (a args) str(k string) string {
	var s string
	_ = json.Unmarshal(a[k], &s)
	return s
}

func (a args) num(k string) (int, bool) {
	raw, ok := a[k]
	if !ok {
		return 0, false
	}
	var n int
	return n, json.Unmarshal(raw, &n) == nil
}

// workspace is the worktree as the tools see it, and what the guardrails remember.
type workspace struct {
	root    string // resolved
	read    map[string]bool
	written int64
	verify  func(ctx context.Context) (string, error)
	// fileCap and totalCap are maxFileBytes and maxTotalWrite; tests lower them.
	fileCap, totalCap int64
	grepFiles         int
	// created counts the files the run made; createdCap is maxCreated, tests lower it.
	created, createdCap int
	// wrote holds what the tools last wrote to each file: the commit takes these files and
	// nothing the verify command left behind (build output, caches), and settle puts these bytes
	// back after a verify that changed them.
	wrote map[string]written
}

func newWorkspace(root string, verify func(ctx context.Context) (string, error)) *workspace {
	return &workspace{root: root, read: map[string]bool{}, wrote: map[string]written{}, verify: verify, fileCap: maxFileBytes, totalCap: maxTotalWrite, grepFiles: maxGrepFiles, createdCap: maxCreated}
}

// resolve confines a path the model gave to the worktree (symbolic links followed) and returns
// it with its name relative to the root.
func (w *workspace) resolve(p string) (abs, rel string, err error) {
	if strings.TrimSpace(p) == "" {
		return "", "", &MalformedError{Reason: "the path is empty"}
	}
	if strings.ContainsRune(p, 0) {
		return "", "", &BlockError{Rule: "outside", Reason: "the path holds a NUL byte"}
	}
	// .git is checked on the name as given and again after links are resolved: in a worktree
	// .git is a file, and a path under it does not resolve at all.
	if err := dotGit(p, filepath.ToSlash(filepath.Clean(p))); err != nil {
		return "", "", err
	}
	abs, err = untrusted.Confine(w.root, p)
	var ce *untrusted.ConfineError
	if errors.As(err, &ce) {
		return "", "", &BlockError{Rule: "outside", Reason: fmt.Sprintf("%s leads out of the repository; every path must stay inside it", p)}
	}
	if err != nil {
		return "", "", &BlockError{Rule: "outside", Reason: fmt.Sprintf("%s cannot be resolved: %v", p, err)}
	}
	rel, err = filepath.Rel(w.root, abs)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return "", "", &BlockError{Rule: "outside", Reason: fmt.Sprintf("%s leads out of the repository", p)}
	}
	rel = filepath.ToSlash(rel)
	if err := dotGit(p, rel); err != nil {
		return "", "", err
	}
	// A git directory under another name: the one a .git file names, or any directory git would
	// take for one, counting the file this call would write.
	if realRoot, err := filepath.EvalSymlinks(w.root); err == nil {
		if _, in := gitsafe.GitDir(realRoot, abs); in {
			return "", "", &BlockError{Rule: "dot_git", Reason: fmt.Sprintf("%s is inside a git directory, which is git's own state; locum never touches it", p)}
		}
	}
	return abs, rel, nil
}

// dotGit blocks a path with a component some file system takes for .git (.GIT, .git. on NTFS,
// git~1).
func dotGit(given, p string) error {
	if gitsafe.NamesGitDir(p) {
		return &BlockError{Rule: "dot_git", Reason: fmt.Sprintf("%s is inside .git, which is git's own state; locum never touches it", given)}
	}
	return nil
}

// run executes one parsed call and returns the text the model gets, and whether it changed the
// worktree.
func (w *workspace) run(ctx context.Context, name string, a args) (string, bool, error) {
	switch name {
	case "read_file":
		s, err := w.readFile(a)
		return s, false, err
	case "list_dir":
		s, err := w.listDir(a)
		return s, false, err
	case "grep":
		s, err := w.grep(a)
		return s, false, err
	case "edit_file":
		return w.editFile(a)
	case "write_file":
		return w.writeFile(a)
	case "run_verify":
		s, err := w.verify(ctx)
		return s, false, err
	}
	return "", false, &MalformedError{Reason: "no tool " + name}
}

func (w *workspace) readText(abs, rel string) ([]byte, error) {
	data, err := untrusted.ReadFile(abs, w.fileCap)
	var tl *untrusted.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, &BlockError{Rule: "size", Reason: fmt.Sprintf("%s is over %d bytes; locum reads and writes files up to that size", rel, w.fileCap)}
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s does not exist", rel)
	case err != nil:
		return nil, &BlockError{Rule: "not_regular", Reason: fmt.Sprintf("%s: %s", rel, reasonOf(err))}
	}
	if bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
		return nil, fmt.Errorf("%s is a binary file", rel)
	}
	return data, nil
}

func reasonOf(err error) string {
	var fe *untrusted.FileError
	if errors.As(err, &fe) {
		return fe.Reason
	}
	return err.Error()
}

func (w *workspace) readFile(a args) (string, error) {
	abs, rel, err := w.resolve(a.str("path"))
	if err != nil {
		return "", err
	}
	data, err := w.readText(abs, rel)
	if err != nil {
		return "", err
	}
	w.read[rel] = true
	lines := splitLines(string(data))
	start, end := 1, len(lines)
	if n, ok := a.num("start_line"); ok && n > 1 {
		start = n
	}
	if n, ok := a.num("end_line"); ok && n >= 1 && n < end {
		end = n
	}
	if len(lines) == 0 {
		return rel + " is empty", nil
	}
	if start > len(lines) {
		return "", fmt.Errorf("%s has %d lines; start_line %d is past its end", rel, len(lines), start)
	}
	if end < start {
		return "", fmt.Errorf("end_line %d is before start_line %d", end, start)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s, lines %d-%d of %d:\n", rel, start, end, len(lines))
	for i := start; i <= end; i++ {
		line := fmt.Sprintf("%d\t%s\n", i, lines[i-1])
		if b.Len()+len(line) > maxResult {
			fmt.Fprintf(&b, "[cut: read on with start_line=%d]\n", i)
			break
		}
		b.WriteString(line)
	}
	return b.String(), nil
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func (w *workspace) listDir(a args) (string, error) {
	dir := a.str("path")
	if dir == "" {
		// Models often mean the root by an empty path.
		dir = "."
	}
	abs, rel, err := w.resolve(dir)
	if err != nil {
		return "", err
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return "", fmt.Errorf("%s is not a folder that can be listed", rel)
	}
	var b strings.Builder
	n := 0
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if n == maxListed {
			fmt.Fprintf(&b, "[cut after %d entries]\n", maxListed)
			break
		}
		name := e.Name()
		if e.IsDir() {
			name += "/"
		}
		b.WriteString(name + "\n")
		n++
	}
	if n == 0 {
		return rel + " is empty", nil
	}
	return b.String(), nil
}

func (w *workspace) grep(a args) (string, error) {
	re, err := regexp.Compile(a.str("pattern"))
	if err != nil {
		return "", fmt.Errorf("the pattern is not a valid RE2 regular expression: %v", err)
	}
	start := a.str("path")
	if start == "" {
		start = "."
	}
	abs, _, err := w.resolve(start)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	matches := 0
	var files []string
	_ = filepath.WalkDir(abs, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	var scanned int64
	for i, p := range files {
		if i == w.grepFiles || scanned > maxGrepBytes {
			fmt.Fprintf(&b, "[stopped after %d of %d files: narrow the path]\n", i, len(files))
			break
		}
		rel, _ := filepath.Rel(w.root, p)
		data, err := untrusted.ReadFile(p, w.fileCap)
		scanned += int64(len(data))
		if err != nil || bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 {
			continue
		}
		for i, line := range splitLines(string(data)) {
			if !re.MatchString(line) {
				continue
			}
			if matches == maxMatches || b.Len() > maxResult {
				fmt.Fprintf(&b, "[cut after %d matches: narrow the pattern or the path]\n", matches)
				return b.String(), nil
			}
			if len(line) > 300 {
				line = line[:300] + "..."
			}
			fmt.Fprintf(&b, "%s:%d: %s\n", filepath.ToSlash(rel), i+1, line)
			matches++
		}
	}
	if matches == 0 {
		return "no match\n" + b.String(), nil
	}
	return b.String(), nil
}

// existing reads the file a write replaces: it must be a regular file, not a symbolic link (a
// write through a link lands somewhere other than the name says), and the model must have read it.
func (w *workspace) existing(abs, rel string, mustExist bool) ([]byte, os.FileMode, bool, error) {
	st, err := os.Lstat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		if mustExist {
			return nil, 0, false, fmt.Errorf("%s does not exist; create it with write_file", rel)
		}
		return nil, 0o644, false, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, false, &BlockError{Rule: "not_regular", Reason: fmt.Sprintf("%s is not a plain file; locum writes plain files only", rel)}
	}
	if !w.read[rel] {
		return nil, 0, false, &BlockError{Rule: "read_first", Reason: fmt.Sprintf("read %s with read_file before you change it", rel)}
	}
	data, err := w.readText(abs, rel)
	return data, st.Mode().Perm(), true, err
}

func (w *workspace) write(abs, rel string, data []byte, mode os.FileMode) error {
	if int64(len(data)) > w.fileCap {
		return &BlockError{Rule: "size", Reason: fmt.Sprintf("the new %s would be %d bytes, over the %d-byte cap for one file", rel, len(data), w.fileCap)}
	}
	if w.written+int64(len(data)) > w.totalCap {
		return &BlockError{Rule: "total_size", Reason: fmt.Sprintf("this run has written %d bytes; the cap for one run is %d", w.written, w.totalCap)}
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return err
	}
	// The parent folders now exist: confine the path again, so a folder swapped for a link
	// between the check and the write is caught.
	if again, _, err := w.resolve(rel); err != nil || again != abs {
		return &BlockError{Rule: "outside", Reason: fmt.Sprintf("%s changed under the write; nothing was written", rel)}
	}
	if err := atomicfile.Write(abs, data, mode); err != nil {
		return err
	}
	w.written += int64(len(data))
	w.read[rel] = true
	w.wrote[rel] = written{data: bytes.Clone(data), mode: mode}
	return nil
}

func (w *workspace) editFile(a args) (string, bool, error) {
	abs, rel, err := w.resolve(a.str("path"))
	if err != nil {
		return "", false, err
	}
	old, mode, _, err := w.existing(abs, rel, true)
	if err != nil {
		return "", false, err
	}
	search, replace := a.str("search"), a.str("replace")
	if search == "" {
		return "", false, &MalformedError{Reason: "search is empty; copy the exact text to replace from read_file's output"}
	}
	text := string(old)
	switch n := strings.Count(text, search); n {
	case 1:
	case 0:
		return "", false, fmt.Errorf("the search text occurs nowhere in %s; nothing was changed. Read the file again and copy the text exactly, without line numbers", rel)
	default:
		return "", false, fmt.Errorf("the search text occurs %d times in %s; nothing was changed. Give more surrounding lines so it occurs once", n, rel)
	}
	i := strings.Index(text, search)
	next := text[:i] + replace + text[i+len(search):]
	if err := w.write(abs, rel, []byte(next), mode); err != nil {
		return "", false, err
	}
	line := strings.Count(text[:i], "\n") + 1
	return fmt.Sprintf("edited %s at line %d:\n%s", rel, line, capDiff(search, replace)), true, nil
}

// capDiff shows an edit as removed and added lines, capped.
func capDiff(search, replace string) string {
	var b strings.Builder
	for _, l := range splitLines(search) {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range splitLines(replace) {
		b.WriteString("+" + l + "\n")
	}
	s := b.String()
	if len(s) > maxDiff {
		s = s[:maxDiff] + "\n[diff cut]\n"
	}
	return s
}

func (w *workspace) writeFile(a args) (string, bool, error) {
	abs, rel, err := w.resolve(a.str("path"))
	if err != nil {
		return "", false, err
	}
	old, mode, existed, err := w.existing(abs, rel, false)
	if err != nil {
		return "", false, err
	}
	content := a.str("content")
	if existed && string(old) == content {
		return fmt.Sprintf("%s already has this content; nothing changed", rel), false, nil
	}
	if !existed && w.created >= w.createdCap {
		return "", false, &BlockError{Rule: "created", Reason: fmt.Sprintf("this run has created %d files; the cap for one run is %d", w.created, w.createdCap)}
	}
	if err := w.write(abs, rel, []byte(content), mode); err != nil {
		return "", false, err
	}
	if !existed {
		w.created++
	}
	verb := "created"
	if existed {
		verb = "replaced"
	}
	return fmt.Sprintf("%s %s (%d lines, %d bytes)", verb, rel, len(splitLines(content)), len(content)), true, nil
}

// verifyTool is run_verify: the operator's command in the worktree, nothing else.
func verifyTool(command, dir string, run func(ctx context.Context, command, dir string) (rails.ShellResult, error)) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		vr, err := run(ctx, command, dir)
		if err != nil {
			return "", fmt.Errorf("the verify command could not start: %w", err)
		}
		if vr.Canceled {
			return "", context.Cause(ctx)
		}
		return fmt.Sprintf("verify: %s\n%s", vr.Verdict(), strings.TrimRight(string(vr.Output), "\n")), nil
	}
}
