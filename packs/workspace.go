package packs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/schema"
)

// WorkspaceFile is where a repository keeps its workspace, relative to the root.
const WorkspaceFile = ".locum/workspace.json"

// Workspace is .locum/workspace.json, as spec/workspace.schema.json describes it.
type Workspace struct {
	Packs    []string `json:"packs"`
	Endpoint struct {
		BaseURL     string `json:"base_url,omitempty"`
		AllowRemote *bool  `json:"allow_remote,omitempty"`
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
// pack is then composed alone.
func LoadWorkspace(v *schema.Validator, root string) (*Workspace, error) {
	data, err := os.ReadFile(filepath.Join(root, WorkspaceFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", WorkspaceFile, unwrapPathError(err))
	}
	if _, err := v.Validate(schema.Workspace, WorkspaceFile, data); err != nil {
		return nil, err
	}
	var ws Workspace
	if err := json.Unmarshal(data, &ws); err != nil {
		return nil, fmt.Errorf("%s: %w", WorkspaceFile, err)
	}
	return &ws, nil
}
