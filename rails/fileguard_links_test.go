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
