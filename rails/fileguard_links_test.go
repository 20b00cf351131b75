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

// assertLinked checks that every name shows want and that the file still has n hard links.
func assertLinked(t *testing.T, want string, n uint64, names ...string) {
	t.Helper()
	for _, name := range names {
		data, err := os.ReadFile(name)
		require.NoError(t, err)
		assert.Equal(t, want, string(data), name)
		st, err := os.Stat(name)
		require.NoError(t, err)
		assert.Equal(t, n, uint64(st.Sys().(*syscall.Stat_t).Nlink), name)
	}
}

// A file with a second hard link keeps its inode through the edit, the restore and a recovery
// after a crash: both names show the same bytes, and it still has two links.
func TestGuardKeepsHardLinks(t *testing.T) {
	for _, tt := range []struct {
		name string
		mode os.FileMode
	}{{"writable", 0o644}, {"read-only", 0o444}, {"setuid", 0o755 | os.ModeSetuid}} {
		t.Run(tt.name, func(t *testing.T) {
			file, rb := guarded(t, "original\n", tt.mode)
			other := filepath.Join(filepath.Dir(file), "other-name")
			require.NoError(t, os.Link(file, other))

			g, err := GuardFile(file, rb)
			require.NoError(t, err)
			require.NoError(t, g.Write([]byte("edited, and longer than the original\n")))
			assertLinked(t, "edited, and longer than the original\n", 2, file, other)
			require.NoError(t, g.Restore())
			g.Release()
			assertLinked(t, "original\n", 2, file, other)
			assertMeta(t, file, tt.mode, uint32(os.Getuid()), uint32(os.Getgid()))

			g, err = GuardFile(file, rb)
			require.NoError(t, err)
			require.NoError(t, g.Write([]byte("an edit a crash left behind\n")))
			crash(g)
			_, err = Recover(rb)
			require.NoError(t, err)
			assertLinked(t, "original\n", 2, file, other)
			assertMeta(t, file, tt.mode, uint32(os.Getuid()), uint32(os.Getgid()))
		})
	}
}

// Intact looks at the file on disk, not at what the guard wrote.
func TestGuardIntact(t *testing.T) {
	for _, tt := range []struct {
		name   string
		change func(t *testing.T, file string)
		intact bool
	}{
		{"untouched", func(*testing.T, string) {}, true},
		{"the same bytes written again", func(t *testing.T, file string) {
			require.NoError(t, os.WriteFile(file, []byte("original\n"), 0o644))
		}, true},
		{"other bytes", func(t *testing.T, file string) {
			require.NoError(t, os.WriteFile(file, []byte("clobbered\n"), 0o644))
		}, false},
		{"emptied", func(t *testing.T, file string) { require.NoError(t, os.Truncate(file, 0)) }, false},
		{"another mode", func(t *testing.T, file string) { require.NoError(t, os.Chmod(file, 0o755)) }, false},
		{"removed", func(t *testing.T, file string) { require.NoError(t, os.Remove(file)) }, false},
		{"a folder now", func(t *testing.T, file string) {
			require.NoError(t, os.Remove(file))
			require.NoError(t, os.Mkdir(file, 0o755))
		}, false},
		{"a link to the same bytes", func(t *testing.T, file string) {
			copyOf := filepath.Join(t.TempDir(), "copy")
			require.NoError(t, os.WriteFile(copyOf, []byte("original\n"), 0o644))
			require.NoError(t, os.Remove(file))
			require.NoError(t, os.Symlink(copyOf, file))
		}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file, rb := guarded(t, "original\n", 0o644)
			g, err := GuardFile(file, rb)
			require.NoError(t, err)
			defer g.Release()
			tt.change(t, file)
			assert.Equal(t, tt.intact, g.Intact())
		})
	}
}

// A verify that replaced the file with a folder: an empty one is removed and the file restored;
// one with something in it stays, the restore fails naming the copy that holds the original.
func TestGuardRestoreOverAFolder(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o640)
	g, err := GuardFile(file, rb)
	require.NoError(t, err)
	require.NoError(t, os.Remove(file))
	require.NoError(t, os.Mkdir(file, 0o755))
	require.NoError(t, g.Restore())
	g.Release()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "original\n", string(data))
	assertMeta(t, file, 0o640, uint32(os.Getuid()), uint32(os.Getgid()))

	g, err = GuardFile(file, rb)
	require.NoError(t, err)
	require.NoError(t, os.Remove(file))
	require.NoError(t, os.Mkdir(file, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(file, "inside"), []byte("the verify's\n"), 0o644))
	err = g.Restore()
	var re *RestoreError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "a folder now, and not an empty one")
	assert.Contains(t, err.Error(), filepath.Join(rb.Dir, recordName(file)+".orig"))
	g.Keep()
	data, err = os.ReadFile(filepath.Join(file, "inside"))
	require.NoError(t, err)
	assert.Equal(t, "the verify's\n", string(data), "a folder with something in it is left as it is")
}

// A verify that swaps the file's folder for a link to another place: neither the edit nor the
// restore writes through it.
func TestGuardWritesNothingThroughAReplacedFolder(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	sub := filepath.Join(root, "pkg")
	require.NoError(t, os.Mkdir(sub, 0o755))
	file := filepath.Join(sub, "f.txt")
	require.NoError(t, os.WriteFile(file, []byte("original\n"), 0o644))
	key, err := LoadRollbackKey(filepath.Join(t.TempDir(), "state"), true)
	require.NoError(t, err)
	rb := Rollback{Dir: filepath.Join(root, ".git", "locum", "rollback"), Root: root, Key: key}
	g, err := GuardFile(file, rb)
	require.NoError(t, err)

	elsewhere := t.TempDir()
	require.NoError(t, os.Rename(sub, filepath.Join(root, "moved")))
	require.NoError(t, os.Symlink(elsewhere, sub))
	assert.False(t, g.Intact())
	assert.ErrorContains(t, g.Write([]byte("the model's text\n")), "was replaced")
	var re *RestoreError
	require.ErrorAs(t, g.Restore(), &re)
	g.Keep()
	entries, err := os.ReadDir(elsewhere)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing was written through the link")
}
