//go:build unix

package rails

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func guarded(t *testing.T, content string, mode os.FileMode) (file string, dir Rollback) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	file = filepath.Join(root, "f.txt")
	require.NoError(t, os.WriteFile(file, []byte(content), mode))
	require.NoError(t, os.Chmod(file, mode))
	key, err := LoadRollbackKey(filepath.Join(t.TempDir(), "state"), true)
	require.NoError(t, err)
	return file, Rollback{Dir: filepath.Join(root, ".git", "locum", "rollback"), Root: root, Key: key}
}

// crash simulates a process that died mid-edit: its lock is released, its record stays.
func crash(g *FileGuard) { g.Keep() }

func TestGuardWriteAndRestoreKeepBytesAndMode(t *testing.T) {
	file, dir := guarded(t, "a\r\nb\r\n", 0o751)
	g, err := GuardFile(file, dir)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("edited")))
	st, _ := os.Stat(file)
	assert.Equal(t, os.FileMode(0o751), st.Mode().Perm())
	require.NoError(t, g.Restore())
	g.Release()
	data, _ := os.ReadFile(file)
	assert.Equal(t, "a\r\nb\r\n", string(data))
	st, _ = os.Stat(file)
	assert.Equal(t, os.FileMode(0o751), st.Mode().Perm())
	entries, _ := os.ReadDir(dir.Dir)
	assert.Empty(t, entries, "the record is removed after the verdict")
}

func TestRecoverAfterACrash(t *testing.T) {
	file, dir := guarded(t, "original\n", 0o640)
	g, err := GuardFile(file, dir)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("half-done edit\n")))
	crash(g)

	recs, err := ListRecords(dir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "restored", recs[0].Action)

	done, err := Recover(dir)
	require.NoError(t, err)
	require.Len(t, done, 1)
	data, _ := os.ReadFile(file)
	assert.Equal(t, "original\n", string(data))
	st, _ := os.Stat(file)
	assert.Equal(t, os.FileMode(0o640), st.Mode().Perm())
	recs, _ = ListRecords(dir)
	assert.Empty(t, recs)
}

func TestRecoverLeavesAChangedFileAndSaysHow(t *testing.T) {
	file, dir := guarded(t, "original\n", 0o644)
	g, err := GuardFile(file, dir)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("edit\n")))
	crash(g)
	require.NoError(t, os.WriteFile(file, []byte("the user's later work\n"), 0o644))

	_, err = Recover(dir)
	var ce *ConflictError
	require.True(t, errors.As(err, &ce))
	assert.Contains(t, ce.Error(), "locum recover --list")
	data, _ := os.ReadFile(file)
	assert.Equal(t, "the user's later work\n", string(data), "a conflict touches nothing")

	recs, _ := ListRecords(dir)
	require.Len(t, recs, 1)
	require.NoError(t, RestoreRecord(recs[0]))
	data, _ = os.ReadFile(file)
	assert.Equal(t, "original\n", string(data))
}

func TestRecoverClearsAnUntouchedFileAndSkipsALiveRun(t *testing.T) {
	file, dir := guarded(t, "original\n", 0o644)
	g, err := GuardFile(file, dir)
	require.NoError(t, err)
	// The record is there before the first write: a verify run on the guarded file may change it.
	recs, _ := ListRecords(dir)
	require.Len(t, recs, 1)
	assert.Equal(t, "live", recs[0].Action, "a run that holds its lock is alive")
	require.NoError(t, g.Write([]byte("original\n")))
	recs, _ = ListRecords(dir)
	require.Len(t, recs, 1)
	assert.Equal(t, "live", recs[0].Action)
	_, err = Recover(dir)
	require.NoError(t, err)
	recs, _ = ListRecords(dir)
	assert.Len(t, recs, 1, "a live run's record is left alone")

	_, err = GuardFile(file, dir)
	assert.ErrorContains(t, err, "already has a rollback record")

	crash(g)
	recs, _ = ListRecords(dir)
	assert.Equal(t, "cleared", recs[0].Action)
	_, err = Recover(dir)
	require.NoError(t, err)
	recs, _ = ListRecords(dir)
	assert.Empty(t, recs)
}
