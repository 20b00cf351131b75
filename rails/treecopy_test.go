//go:build unix

package rails

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A scratch copy holds the tree's files, directories and links, and none of its git directories,
// .git files or links, at any depth, nor its special files.
func TestCopyTree(t *testing.T) {
	src := tree(t, map[string]string{"a.go": "package a\n", "sub/b.go": "package sub\n", "sub/link": "->../a.go", "ro.txt": "ro",
		".git/HEAD": "ref: refs/heads/main\n", ".git/config": "[core]\n", "mod/.git": "gitdir: ../.git/modules/mod\n", "mod/m.go": "package m\n",
		"wt/.git": "->../.git", "empty/": ""})
	require.NoError(t, os.Chmod(filepath.Join(src, "ro.txt"), 0o444))
	require.NoError(t, syscall.Mkfifo(filepath.Join(src, "fifo"), 0o600))
	dst := t.TempDir()
	require.NoError(t, CopyTree(src, dst))
	for p, want := range map[string]string{"a.go": "package a\n", "sub/b.go": "package sub\n", "mod/m.go": "package m\n", "ro.txt": "ro"} {
		got, err := os.ReadFile(filepath.Join(dst, p))
		require.NoError(t, err)
		assert.Equal(t, want, string(got))
	}
	st, err := os.Stat(filepath.Join(dst, "ro.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o444), st.Mode().Perm())
	link, err := os.Readlink(filepath.Join(dst, "sub/link"))
	require.NoError(t, err)
	assert.Equal(t, "../a.go", link)
	assert.DirExists(t, filepath.Join(dst, "empty"))
	for _, p := range []string{".git", "mod/.git", "wt/.git", "fifo"} {
		_, err := os.Lstat(filepath.Join(dst, p))
		assert.ErrorIs(t, err, os.ErrNotExist, p)
	}
}

// A tree past a bound is not copied whole, and says which bound.
func TestCopyTreeBounds(t *testing.T) {
	src := tree(t, map[string]string{"a": "0123456789", "b": "0123456789", "c/d": "x"})
	setBound(t, &copyTreeEntries, 2)
	var over *CopyTooLargeError
	require.ErrorAs(t, CopyTree(src, t.TempDir()), &over)
	assert.Equal(t, "entries", over.What)
	setBound(t, &copyTreeEntries, 100)
	old := copyTreeBytes
	copyTreeBytes = 15
	t.Cleanup(func() { copyTreeBytes = old })
	require.ErrorAs(t, CopyTree(src, t.TempDir()), &over)
	assert.Equal(t, "bytes", over.What)
	assert.Contains(t, over.Error(), "more than 15 bytes")
}
