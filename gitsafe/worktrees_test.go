package gitsafe

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// Worktrees made at once take turns on the repository's git directory, and a run's folder of them
// goes whole: each checked out at the commit asked, one left empty, none left behind.
func TestWorktreesOfARun(t *testing.T) {
	ctx := context.Background()
	root := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	head, err := Head(ctx, root)
	require.NoError(t, err)
	g := NewWorktrees(root)
	var wg sync.WaitGroup
	paths := make([]string, 4)
	for i := range paths {
		wg.Go(func() {
			dir, err := WorktreeDir(root, "run/"+string(rune('a'+i)))
			require.NoError(t, err)
			paths[i], err = g.AddDetached(ctx, dir, head, i == 3)
			require.NoError(t, err)
		})
	}
	wg.Wait()
	for i, p := range paths[:3] {
		data, err := os.ReadFile(filepath.Join(p, "a.txt"))
		require.NoError(t, err, "worktree %d", i)
		assert.Equal(t, "a\n", string(data))
		got, err := Head(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, head, got)
	}
	_, err = os.Lstat(filepath.Join(paths[3], "a.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist, "a worktree made without a checkout holds no file")

	g.Drop(ctx, paths[0])
	assert.NoDirExists(t, paths[0])
	require.NoError(t, g.RemoveRun(ctx, "run"))
	dir, err := WorktreeDir(root, "run")
	require.NoError(t, err)
	assert.NoDirExists(t, dir)
	assert.NotContains(t, gittest.Git(t, root, "worktree", "list"), "locum")
}

// TopHead names a commit only for a repository's top level that has one.
func TestTopHead(t *testing.T) {
	ctx := context.Background()
	root := gittest.Repo(t, map[string]string{"sub/a.txt": "a\n"})
	head, err := Head(ctx, root)
	require.NoError(t, err)
	assert.Equal(t, head, TopHead(ctx, root))
	assert.Empty(t, TopHead(ctx, filepath.Join(root, "sub")), "a folder inside a repository")
	fresh := t.TempDir()
	gittest.Init(t, fresh)
	assert.Empty(t, TopHead(ctx, fresh), "no commit yet")
	assert.Empty(t, TopHead(ctx, t.TempDir()), "no repository")
}

// Runs of one process that each add a worktree on a branch of their own and remove it (a bench's
// agent cells), apart from any Worktrees, and a run's Worktrees adding and pruning beside them,
// take turns on the repository: none meets another's worktree half made, or prunes it.
func TestWorktreeCommandsOfOneRepositoryTakeTurns(t *testing.T) {
	ctx := context.Background()
	root := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	head, err := Head(ctx, root)
	require.NoError(t, err)
	g := NewWorktrees(root)
	var wg sync.WaitGroup
	for i := range 6 {
		name := "turns-" + string(rune('a'+i))
		wg.Go(func() {
			dir, err := WorktreeDir(root, name)
			if !assert.NoError(t, err) {
				return
			}
			if i%2 == 0 {
				_, err = g.AddDetached(ctx, dir, head, false)
				assert.NoError(t, err, "%s added through the run's worktrees", name)
				assert.NoError(t, g.RemoveRun(ctx, name))
				return
			}
			assert.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
			_, err = RunLocked(ctx, root, root, "worktree", "add", "--quiet", "-b", "locum/"+name, dir, head)
			assert.NoError(t, err, "%s added on a branch of its own", name)
			assert.NoError(t, RemoveWorktree(ctx, root, dir))
			assert.NoError(t, DeleteBranch(ctx, root, "locum/"+name))
		})
	}
	wg.Wait()
	assert.NotContains(t, gittest.Git(t, root, "worktree", "list"), "locum")
}
