package gitsafe

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A git directory the repository could have brought along is not written in: a .git file naming
// a committed folder, a .git that is a link, a locum folder inside .git that links out, a gitdir
// with no HEAD.
func TestGitPathRefusesWhatARepositoryCouldPlant(t *testing.T) {
	outside := t.TempDir()

	committed := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(committed, "g"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(committed, "g", "HEAD"), []byte("ref: x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(committed, ".git"), []byte("gitdir: g\n"), 0o644))
	assert.Empty(t, GitPath(committed, "locum/runs"))

	noHead := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(noHead, ".git"), []byte("gitdir: "+outside+"\n"), 0o644))
	assert.Empty(t, GitPath(noHead, "locum/runs"))

	linked := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(linked, ".git")))
	assert.Empty(t, GitPath(linked, "locum/runs"))

	inner := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(inner, ".git"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(inner, ".git", "locum")))
	assert.Empty(t, GitPath(inner, "locum/runs"))
	assert.Empty(t, GitPath(inner, "locum/rollback"))
}

// A worktree goes only under locum/worktrees of a git directory locum trusts, reached with no
// symbolic link at all: one out of the repository, or one to the git directory's own objects.
func TestWorktreeDirRefusesALinkOnTheWay(t *testing.T) {
	outside := t.TempDir()
	cases := []struct {
		name  string
		plant func(t *testing.T, gitDir string)
		ok    bool
	}{
		{"a plain git directory", func(*testing.T, string) {}, true},
		{"locum links out", func(t *testing.T, gitDir string) {
			require.NoError(t, os.Symlink(outside, filepath.Join(gitDir, "locum")))
		}, false},
		{"worktrees links to the objects", func(t *testing.T, gitDir string) {
			require.NoError(t, os.MkdirAll(filepath.Join(gitDir, "objects"), 0o755))
			require.NoError(t, os.MkdirAll(filepath.Join(gitDir, "locum"), 0o755))
			require.NoError(t, os.Symlink(filepath.Join(gitDir, "objects"), filepath.Join(gitDir, "locum", "worktrees")))
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			gitDir := filepath.Join(root, ".git")
			require.NoError(t, os.MkdirAll(gitDir, 0o755))
			tc.plant(t, gitDir)
			dir, err := WorktreeDir(root, "20261130T100000Z-aaaaaa")
			if !tc.ok {
				var place *WorktreePlaceError
				assert.ErrorAs(t, err, &place)
				assert.Empty(t, dir)
				return
			}
			require.NoError(t, err)
			real, err := filepath.EvalSymlinks(gitDir)
			require.NoError(t, err)
			assert.Equal(t, filepath.Join(real, "locum", "worktrees", "20261130T100000Z-aaaaaa"), dir)
		})
	}
}
