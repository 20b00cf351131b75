package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func readXattrsAt(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	x, err := ReadXattrs(f)
	require.NoError(t, err)
	return x
}

// The attributes Meta names are the ones the file ends with, whether written anew or in place;
// nil leaves them as they are.
func TestWriteKeepsExtendedAttributes(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, []byte("old\n"), 0o644))
	if err := unix.Setxattr(path, "user.locum.a", []byte("one"), 0); errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("the file system of %s keeps no user extended attributes", dir)
	} else {
		require.NoError(t, err)
	}
	require.NoError(t, unix.Setxattr(path, "user.locum.empty", nil, 0))
	want := readXattrsAt(t, path)
	assert.Equal(t, map[string][]byte{"user.locum.a": []byte("one"), "user.locum.empty": {}}, want)

	require.NoError(t, WriteMeta(path, []byte("new\n"), Meta{Mode: 0o644, UID: -1, GID: -1, Xattrs: want}))
	assert.Equal(t, want, readXattrsAt(t, path), "a new file given the old one's attributes")

	require.NoError(t, WriteMeta(path, []byte("newer\n"), Meta{Mode: 0o644, UID: -1, GID: -1}))
	assert.Empty(t, readXattrsAt(t, path), "nil gives a new file none")

	require.NoError(t, unix.Setxattr(path, "user.locum.extra", []byte("x"), 0))
	st, err := os.Stat(path)
	require.NoError(t, err)
	ino := st.Sys().(*syscall.Stat_t).Ino
	same := func(st os.FileInfo) bool { return st.Sys().(*syscall.Stat_t).Ino == ino }
	require.NoError(t, WriteInPlace(path, []byte("in place\n"), Meta{Mode: 0o644, UID: -1, GID: -1, Xattrs: want}, same))
	assert.Equal(t, want, readXattrsAt(t, path), "in place, the attributes named and no other")
}
