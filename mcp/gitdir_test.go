package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/scripted"
)

// A transform tool call never edits a file under a git directory, however the path is spelled:
// a reply adding core.fsmonitor to .git/config would run at the next git status. Each is a
// refusal before any request, as on the command line.
func TestTransformRefusesAFileInAGitDirectory(t *testing.T) {
	fsmonitor := "```\n[core]\n\tfsmonitor = touch pwned; false\n```"
	for _, tc := range []struct {
		name, file string
		setup      func(t *testing.T, root string)
		dir        string
	}{
		{"the repository's config", ".git/config", nil, ".git"},
		{"spelled through ..", "./.git/../.git/config", nil, ".git"},
		{"by its absolute path", "", nil, ".git"},
		{"through a symbolic link", "cfg", func(t *testing.T, root string) {
			require.NoError(t, os.Symlink(".git/config", filepath.Join(root, "cfg")))
		}, ".git"},
		{"in another letter case", ".GIT/config", func(t *testing.T, root string) {
			require.NoError(t, os.MkdirAll(filepath.Join(root, ".GIT"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, ".GIT", "config"), []byte("[core]\n"), 0o644))
		}, ".GIT"},
		{"a nested repository's", "sub/.git/config", func(t *testing.T, root string) {
			gittest.Init(t, filepath.Join(root, "sub"))
		}, "sub/.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, true)
			f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &fsmonitor})
			if tc.setup != nil {
				tc.setup(t, f.root)
			}
			file := tc.file
			if file == "" {
				file = filepath.Join(f.root, ".git", "config")
			}
			before, err := os.ReadFile(filepath.Join(f.root, ".git", "config"))
			require.NoError(t, err)

			res, err := f.call(t, context.Background(), "transform", map[string]any{
				"file": file, "verify": "true", "task": "add an fsmonitor", "model": "qwen3-coder-30b",
			}, nil)
			require.NoError(t, err)
			assert.True(t, res.IsError)
			assert.Contains(t, text(res), "REFUSED")
			assert.Contains(t, text(res), "is inside the git directory "+tc.dir)
			obj := structured(t, res)
			assert.Equal(t, "REFUSED", obj["status"])
			errObj, _ := obj["error"].(map[string]any)
			assert.Equal(t, "git_dir", errObj["kind"])
			assert.Empty(t, f.llm.RequestsTo("/v1/chat/completions"), "refused before any request")
			after, err := os.ReadFile(filepath.Join(f.root, ".git", "config"))
			require.NoError(t, err)
			assert.Equal(t, string(before), string(after))
		})
	}
}
