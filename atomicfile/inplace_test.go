//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func inode(t *testing.T, path string) (ino, nlink uint64) {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	sys := st.Sys().(*syscall.Stat_t)
	return uint64(sys.Ino), uint64(sys.Nlink)
}

// WriteInPlace keeps the inode, so a second hard link sees the new bytes, shorter or longer;
// it writes nothing into a file that is not the one meant.
func TestWriteInPlace(t *testing.T) {
	for _, tt := range []struct{ name, before, after string }{
		{"longer", "short\n", "a good deal longer than before\n"},
		{"shorter", "a good deal longer than after\n", "short\n"},
		{"emptied", "something\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, other := filepath.Join(dir, "f"), filepath.Join(dir, "g")
			require.NoError(t, os.WriteFile(path, []byte(tt.before), 0o644))
			require.NoError(t, os.Link(path, other))
			ino, _ := inode(t, path)
			same := func(st os.FileInfo) bool { return uint64(st.Sys().(*syscall.Stat_t).Ino) == ino }
			require.NoError(t, WriteInPlace(path, []byte(tt.after), Meta{Mode: 0o640, UID: -1, GID: -1}, same))
			for _, name := range []string{path, other} {
				data, err := os.ReadFile(name)
				require.NoError(t, err)
				assert.Equal(t, tt.after, string(data))
				gotIno, nlink := inode(t, name)
				assert.Equal(t, ino, gotIno)
				assert.Equal(t, uint64(2), nlink)
				st, err := os.Stat(name)
				require.NoError(t, err)
				assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
			}
			assertNoTemporaryLeft(t, dir)
		})
	}
}

func TestWriteInPlaceRefusesAnotherFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("theirs\n"), 0o644))
	err := WriteInPlace(path, []byte("mine\n"), Meta{Mode: 0o644, UID: -1, GID: -1}, func(os.FileInfo) bool { return false })
	assert.ErrorIs(t, err, ErrNotSame)
	data, _ := os.ReadFile(path)
	assert.Equal(t, "theirs\n", string(data))

	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, []byte("target\n"), 0o644))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(target, link))
	assert.Error(t, WriteInPlace(link, []byte("mine\n"), Meta{Mode: 0o644, UID: -1, GID: -1}, func(os.FileInfo) bool { return true }))
	data, _ = os.ReadFile(target)
	assert.Equal(t, "target\n", string(data), "a link is not followed")
}
