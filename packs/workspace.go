package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// WorkspaceFile is where a repository keeps its workspace, relative to the root.
const WorkspaceFile = ".locum/workspace.json"

// Workspace is .locum/workspace.json, as spec/workspace.schema.json describes it.
type Workspace struct {
	Packs    []string `json:"packs"`
	Endpoint struct {
		BaseURL string `json:"base_url,omitempty"`
	} `json:"endpoint"`
	Overrides map[string]map[string]json.RawMessage `json:"overrides,omitempty"`
	Trust     struct {
		Keys []string `json:"keys,omitempty"`
	} `json:"trust"`
	Verify []RecipeSpec `json:"verify,omitempty"`
}

// FindRoot returns the repository root that holds dir: the nearest ancestor with a .git entry
// (a directory, or a file for a worktree), else the nearest with a .locum directory, else dir.
func FindRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	locum := ""
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		}
		if locum == "" {
			if st, err := os.Stat(filepath.Join(d, ".locum")); err == nil && st.IsDir() {
				locum = d
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if locum != "" {
		return locum, nil
	}
	return abs, nil
}

// LoadWorkspace reads root/.locum/workspace.json. A missing file is (nil, nil): the built-in
// pack is then composed alone. The file is the repository's, so it is read as untrusted: a
// regular file inside the repository (after symbolic links) of at most untrusted.ConfigCap bytes,
// no key named twice, and nothing in it that only the operator may say.
func LoadWorkspace(v *schema.Validator, root string) (*Workspace, error) {
	if _, err := os.Lstat(filepath.Join(root, WorkspaceFile)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	data, err := untrusted.ReadFileIn(root, WorkspaceFile, untrusted.ConfigCap)
	if err != nil {
		return nil, err
	}
	if err := ValidateWorkspace(v, WorkspaceFile, data); err != nil {
		return nil, err
	}
	var ws Workspace
	if err := json.Unmarshal(data, &ws); err != nil {
		return nil, fmt.Errorf("%s: %w", WorkspaceFile, err)
	}
	return &ws, nil
}

// ValidateWorkspace checks a workspace file's bytes: JSON with no key named twice, nothing only
// the operator may say, and the schema. file names it in messages.
func ValidateWorkspace(v *schema.Validator, file string, data []byte) error {
	doc, err := schema.Decode(file, data)
	if err != nil {
		return err
	}
	if p := operatorOnly(file, doc); p != nil {
		return &schema.InvalidError{File: file, Problems: []schema.Problem{*p}}
	}
	if err := v.ValidateValue(schema.Workspace, file, doc); err != nil {
		return err
	}
	var ws Workspace
	if err := json.Unmarshal(data, &ws); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if problems := modeProblems(file, "/overrides", ws.Overrides); len(problems) > 0 {
		return &schema.InvalidError{File: file, Problems: problems}
	}
	return nil
}

// operatorOnly finds a setting in a repository's file that only the operator may give: leaving
// loopback sends the repository's text off the machine, so a committed file never decides it.
func operatorOnly(file string, doc any) *schema.Problem {
	obj, _ := doc.(map[string]any)
	ep, _ := obj["endpoint"].(map[string]any)
	if _, ok := ep["allow_remote"]; ok {
		return &schema.Problem{File: file, Pointer: "/endpoint/allow_remote", Message: AllowRemoteRefusal}
	}
	for mode, keys := range mapOf(obj["overrides"]) {
		if _, ok := mapOf(keys)["allow_remote"]; ok {
			return &schema.Problem{File: file, Pointer: "/overrides/" + mode + "/allow_remote", Message: AllowRemoteRefusal}
		}
	}
	return nil
}

// AllowRemoteRefusal is what a repository's file that tries to leave loopback is told.
const AllowRemoteRefusal = "allow_remote is the operator's: pass --allow-remote, set LOCUM_ALLOW_REMOTE=1, or set it in your user config; a file in the repository cannot"

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
