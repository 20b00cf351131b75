package bench

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// FolderFile is the file of a bench folder that lists its tasks (spec/bench-folder.schema.json).
const FolderFile = "bench.json"

// defaultFolderMode is the mode a bench folder's task runs where it names none: the format's
// tasks are spans of a file, which it edits in place.
const defaultFolderMode = "transform"

// FolderTask is one task of a bench folder, as its bench.json gives it: a span of a file of a
// repository (a snapshot in the folder, or a commit of the repository the bench runs in), what
// to do to it, the verify that keeps an edit, and an oracle the model never sees.
type FolderTask struct {
	ID       string        `json:"id"`
	Snapshot string        `json:"snapshot,omitempty"`
	Commit   string        `json:"commit,omitempty"`
	Mode     string        `json:"mode,omitempty"`
	File     string        `json:"file"`
	Lines    string        `json:"lines,omitempty"`
	Symbol   string        `json:"symbol,omitempty"`
	Task     string        `json:"task"`
	Verify   string        `json:"verify"`
	Oracle   *FolderOracle `json:"oracle,omitempty"`
}

// FolderOracle says whether a kept edit is right: Command run on a copy of the tree as the edit
// left it, with the files of the folder Files laid over it (hidden tests).
type FolderOracle struct {
	Command string `json:"command"`
	Files   string `json:"files,omitempty"`
}

// folderDoc is bench.json as a whole.
type folderDoc struct {
	Bench string       `json:"bench"`
	Tasks []FolderTask `json:"tasks"`
}

// ParseFolder reads the bytes of a bench folder's bench.json (file names it in a message): one
// JSON object, no key named twice in any letter case, valid against
// spec/bench-folder.schema.json; then each task's id unique, each path relative and inside its
// folder as written, naming no git directory, and each span's lines in order. What it reads is
// the folder's, which anyone may have written: a refusal names the problem and its place.
func ParseFolder(v *schema.Validator, file string, data []byte) ([]FolderTask, error) {
	if _, err := v.Validate(schema.BenchFolder, file, data); err != nil {
		return nil, err
	}
	var doc folderDoc
	if err := schema.DecodeInto(file, data, &doc); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i, t := range doc.Tasks {
		at := fmt.Sprintf("%s: /tasks/%d", file, i)
		if seen[t.ID] {
			return nil, engine.BadInputf("%s: id %q is the id of an earlier task", at, t.ID)
		}
		seen[t.ID] = true
		paths := []struct{ name, path string }{{"file", t.File}, {"snapshot", t.Snapshot}}
		if t.Oracle != nil {
			paths = append(paths, struct{ name, path string }{"oracle/files", t.Oracle.Files})
		}
		for _, p := range paths {
			if err := checkPath(p.path); p.path != "" && err != nil {
				return nil, engine.BadInputf("%s/%s %s: %v", at, p.name, untrusted.Escape(p.path), err)
			}
		}
		if t.Lines != "" {
			a, b, _ := strings.Cut(t.Lines, "-")
			start, _ := strconv.Atoi(a)
			end, _ := strconv.Atoi(b)
			if end < start {
				return nil, engine.BadInputf("%s/lines %s: the span ends before it starts", at, t.Lines)
			}
		}
	}
	return doc.Tasks, nil
}

// checkPath refuses a path of a bench folder that is not relative, slash-separated and inside its
// folder as written, or that names a git directory.
func checkPath(p string) error {
	switch {
	case strings.ContainsAny(p, "\\\x00"):
		return errors.New("holds a backslash or a NUL: name it with slashes")
	case !filepath.IsLocal(filepath.FromSlash(p)) || strings.HasPrefix(p, "/"):
		return errors.New("not a relative path inside the folder")
	case slices.Contains(strings.Split(p, "/"), ".."):
		return errors.New("names its folder's parent")
	case gitsafe.NamesGitDir(p):
		return errors.New("names a git directory")
	}
	return nil
}

// maxOracleFiles and maxOracleBytes bound the hidden files one oracle lays over a tree: they are
// read into memory once, for every cell the oracle judges.
const (
	maxOracleFiles = 1000
	maxOracleBytes = 16 << 20
)

// oracleFile is one hidden file of an oracle: its path from the tree's root and its bytes.
type oracleFile struct {
	rel  string
	data []byte
	mode fs.FileMode
}

// readOracleFiles reads the regular files under dir (resolved, inside the bench folder), each
// confined to it, none under a git directory, within the bounds; a link or a special file is
// left out, as no oracle needs one and either could lead outside.
func readOracleFiles(dir string) ([]oracleFile, string, error) {
	var out []oracleFile
	var total int64
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		if gitsafe.IsGitName(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if len(out) >= maxOracleFiles {
			return fmt.Errorf("more than %d files", maxOracleFiles)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if total += info.Size(); total > maxOracleBytes {
			return fmt.Errorf("more than %d MiB", maxOracleBytes>>20)
		}
		data, err := untrusted.ReadFileIn(dir, rel, maxOracleBytes)
		if err != nil {
			return err
		}
		out = append(out, oracleFile{rel: filepath.ToSlash(rel), data: data, mode: info.Mode().Perm()})
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", filepath.ToSlash(rel), info.Mode().Perm(), len(data))
		h.Write(data)
		return nil
	})
	return out, hex.EncodeToString(h.Sum(nil)), err
}

// overlay writes the oracle's files into tree, a scratch copy: each inside it after symbolic
// links, replacing what is there.
func overlay(tree string, files []oracleFile) error {
	for _, f := range files {
		target, err := untrusted.Confine(tree, filepath.FromSlash(f.rel))
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		_ = os.Remove(target)
		if err := os.WriteFile(target, f.data, f.mode|0o200); err != nil {
			return err
		}
	}
	return nil
}

// folderDir resolves a folder a bench folder's task names (its snapshot, its oracle's files):
// inside the bench folder after symbolic links, and a directory.
func folderDir(root, rel string) (string, error) {
	real, err := untrusted.Confine(root, filepath.FromSlash(rel))
	if err != nil {
		return "", err
	}
	st, err := os.Stat(real)
	if err != nil {
		return "", fmt.Errorf("%s: %w", untrusted.Escape(rel), err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("%s is not a folder", untrusted.Escape(rel))
	}
	return real, nil
}
