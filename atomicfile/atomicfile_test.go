package atomicfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, path string)
		mode  os.FileMode
	}{
		{"a new file", func(*testing.T, string) {}, 0o640},
		{"over an old file, taking the new mode", func(t *testing.T, path string) {
			require.NoError(t, os.WriteFile(path, []byte("old and longer than the new bytes"), 0o600))
		}, 0o644},
		{"with the setgid bit", func(*testing.T, string) {}, 0o644 | os.ModeSetgid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.txt")
			tt.setup(t, path)
			require.NoError(t, Write(path, []byte("new"), tt.mode))
			got, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.Equal(t, "new", string(got))
			st, err := os.Stat(path)
			require.NoError(t, err)
			assert.Equal(t, tt.mode, st.Mode()&(os.ModePerm|os.ModeSetgid))
			assertNoTemporaryLeft(t, filepath.Dir(path))
		})
	}
}

// A write that cannot land leaves what was there and no temporary file behind.
func TestWriteFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "a-directory")
	require.NoError(t, os.Mkdir(target, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(target, "inside"), []byte("kept"), 0o644))
	assert.Error(t, Write(target, []byte("new"), 0o644))
	got, err := os.ReadFile(filepath.Join(target, "inside"))
	require.NoError(t, err)
	assert.Equal(t, "kept", string(got))
	assertNoTemporaryLeft(t, dir)

	assert.Error(t, Write(filepath.Join(dir, "missing", "f"), []byte("new"), 0o644))
}

// Giving the file its own owner back always works; UID -1 leaves it to the writer.
func TestWriteMetaOwner(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, WriteMeta(path, []byte("x"), Meta{Mode: 0o600, UID: os.Getuid(), GID: os.Getgid()}))
	require.NoError(t, WriteMeta(path, []byte("y"), Meta{Mode: 0o600, UID: -1, GID: -1}))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "y", string(got))
}

func assertNoTemporaryLeft(t *testing.T, dir string) {
	t.Helper()
	left, err := filepath.Glob(filepath.Join(dir, ".*.locum-*"))
	require.NoError(t, err)
	assert.Empty(t, left)
}
