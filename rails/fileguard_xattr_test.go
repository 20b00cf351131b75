//go:build linux

package rails

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// setUserXattr sets a user.* attribute, or skips the test where the file system keeps none.
func setUserXattr(t *testing.T, path, name, value string) {
	t.Helper()
	err := unix.Setxattr(path, name, []byte(value), 0)
	if errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP) {
		t.Skipf("the file system of %s keeps no user extended attributes", path)
	}
	require.NoError(t, err)
}

func userXattr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := unix.Getxattr(path, name, buf)
	if errors.Is(err, unix.ENODATA) {
		return "<none>"
	}
	require.NoError(t, err)
	return string(buf[:n])
}

// A file's user.* attribute survives the edit, the restore and a recovery after a crash, and one
// the verify added is gone after the restore; with one link and with two.
func TestGuardKeepsExtendedAttributes(t *testing.T) {
	for _, links := range []int{1, 2} {
		t.Run(map[int]string{1: "one link", 2: "two links"}[links], func(t *testing.T) {
			file, rb := guarded(t, "original\n", 0o644)
			setUserXattr(t, file, "user.locum.test", "kept")
			if links == 2 {
				require.NoError(t, os.Link(file, filepath.Join(filepath.Dir(file), "other-name")))
			}
			g, err := GuardFile(file, rb)
			require.NoError(t, err)
			require.NoError(t, g.Write([]byte("edit\n")))
			assert.Equal(t, "kept", userXattr(t, file, "user.locum.test"), "after the edit")
			setUserXattr(t, file, "user.locum.verify", "added by the verify")
			assert.False(t, g.Intact())
			require.NoError(t, g.Restore())
			g.Release()
			assert.Equal(t, "kept", userXattr(t, file, "user.locum.test"), "after the restore")
			assert.Equal(t, "<none>", userXattr(t, file, "user.locum.verify"), "after the restore")

			g, err = GuardFile(file, rb)
			require.NoError(t, err)
			require.NoError(t, g.Write([]byte("an edit a crash left behind\n")))
			crash(g)
			_, err = Recover(rb)
			require.NoError(t, err)
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			assert.Equal(t, "original\n", string(data))
			assert.Equal(t, "kept", userXattr(t, file, "user.locum.test"), "after a recovery")
		})
	}
}
