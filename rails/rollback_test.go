//go:build unix

package rails

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsNotWrittenByThisUserAreNeverActedOn(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o644)
	outside := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(outside, []byte("victim\n"), 0o644))

	// A genuine record under another key: what a repository could bring from elsewhere.
	other := rb
	other.Key = make([]byte, 32)
	g, err := GuardFile(file, other)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("edit\n")))
	crash(g)

	// Records sealed with the right key but naming what they must not.
	seal := func(name string, rec CrashRecord) {
		data, err := rec.seal(rb.Key)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(rb.Dir, name+".json"), data, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(rb.Dir, name+".orig"), []byte("planted\n"), 0o600))
	}
	seal(recordName(outside), CrashRecord{Version: 1, Path: outside, Mode: 0o644, Size: 8, Original: hash([]byte("planted\n")), Written: hash([]byte("victim\n"))})
	link := filepath.Join(rb.Root, "link")
	require.NoError(t, os.Symlink(outside, link))
	seal(recordName(link), CrashRecord{Version: 1, Path: link, Mode: 0o644, Size: 8, Original: hash([]byte("planted\n")), Written: hash([]byte("victim\n"))})
	seal("0123456789abcdef", CrashRecord{Version: 1, Path: file, Mode: 0o644, Size: 8, Original: hash([]byte("planted\n")), Written: hash([]byte("edit\n"))})

	recs, err := ListRecords(rb)
	require.NoError(t, err)
	require.Len(t, recs, 4)
	whys := []string{}
	for _, r := range recs {
		assert.Equal(t, "untrusted", r.Action, r.Record.RecordFile)
		whys = append(whys, r.Why)
		assert.Contains(t, r.RemoveHint(), "rm -f '"+r.Record.RecordFile+"'")
	}
	joined := strings.Join(whys, "\n")
	assert.Contains(t, joined, "not written by this user's locum")
	assert.Contains(t, joined, "outside the repository")
	assert.Contains(t, joined, "through a symbolic link")
	assert.Contains(t, joined, "its name does not match")

	done, err := Recover(rb)
	require.NoError(t, err)
	assert.Len(t, done, 4)
	data, _ := os.ReadFile(outside)
	assert.Equal(t, "victim\n", string(data))
	data, _ = os.ReadFile(file)
	assert.Equal(t, "edit\n", string(data), "an untrusted record restores nothing")
	for _, r := range recs {
		_, err := os.Stat(r.Record.RecordFile)
		assert.NoError(t, err, "an untrusted record is never deleted")
		assert.ErrorContains(t, RestoreRecord(r), "will not act on")
		assert.ErrorContains(t, DiscardRecord(r), "will not act on")
	}
}

func TestNoKeyTrustsNoRecord(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o644)
	g, err := GuardFile(file, rb)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("edit\n")))
	crash(g)
	rb.Key = nil
	recs, err := ListRecords(rb)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "untrusted", recs[0].Action)
}

func TestRestoreKeepsSpecialBitsAndOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another owner needs root")
	}
	for _, mode := range []os.FileMode{0o755 | os.ModeSetuid, 0o755 | os.ModeSetgid, 0o644 | os.ModeSticky} {
		file, rb := guarded(t, "original\n", 0o644)
		require.NoError(t, os.Chown(file, 1234, 5678))
		require.NoError(t, os.Chmod(file, mode))
		g, err := GuardFile(file, rb)
		require.NoError(t, err)
		require.NoError(t, g.Write([]byte("edit\n")))
		assertMeta(t, file, mode, 1234, 5678)
		require.NoError(t, g.Restore())
		g.Release()
		assertMeta(t, file, mode, 1234, 5678)

		// And from a crash record.
		g, err = GuardFile(file, rb)
		require.NoError(t, err)
		require.NoError(t, g.Write([]byte("edit\n")))
		crash(g)
		require.NoError(t, os.Chmod(file, 0o600))
		require.NoError(t, os.Chown(file, 0, 0))
		require.NoError(t, os.WriteFile(file, []byte("edit\n"), 0o600))
		done, err := Recover(rb)
		require.NoError(t, err)
		require.Len(t, done, 1)
		assertMeta(t, file, mode, 1234, 5678)
	}
}

func assertMeta(t *testing.T, file string, mode os.FileMode, uid, gid uint32) {
	t.Helper()
	st, err := os.Stat(file)
	require.NoError(t, err)
	assert.Equal(t, mode, st.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	sys := st.Sys().(*syscall.Stat_t)
	assert.Equal(t, uid, sys.Uid)
	assert.Equal(t, gid, sys.Gid)
}

func TestAFailedRestoreKeepsTheOnlyCopy(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o644)
	g, err := GuardFile(file, rb)
	require.NoError(t, err)
	require.NoError(t, g.Write([]byte("edit\n")))
	// The verify replaced the file with a directory: the rename cannot put the original back.
	require.NoError(t, os.Remove(file))
	require.NoError(t, os.Mkdir(file, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(file, "x"), nil, 0o644))
	err = g.Restore()
	var re *RestoreError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "locum recover --restore")
	g.Keep()
	entries, _ := os.ReadDir(rb.Dir)
	assert.Len(t, entries, 2, "the record and its copy stay")
	copyFile := filepath.Join(rb.Dir, recordName(file)+".orig")
	data, _ := os.ReadFile(copyFile)
	assert.Equal(t, "original\n", string(data))

	// Once the cause is gone, recover puts it back.
	require.NoError(t, os.RemoveAll(file))
	recs, err := ListRecords(rb)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.NoError(t, RestoreRecord(recs[0]))
	data, _ = os.ReadFile(file)
	assert.Equal(t, "original\n", string(data))
}

func TestAPlantedCopyLinkIsNotFollowed(t *testing.T) {
	file, rb := guarded(t, "original\n", 0o644)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("victim\n"), 0o644))
	require.NoError(t, os.MkdirAll(rb.Dir, 0o700))
	require.NoError(t, os.Symlink(victim, filepath.Join(rb.Dir, recordName(file)+".orig")))
	_, err := GuardFile(file, rb)
	require.Error(t, err)
	data, _ := os.ReadFile(victim)
	assert.Equal(t, "victim\n", string(data))
}

func TestRollbackKey(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state", "locum")
	key, err := LoadRollbackKey(state, false)
	require.NoError(t, err)
	assert.Nil(t, key, "no key is made without create")
	key, err = LoadRollbackKey(state, true)
	require.NoError(t, err)
	assert.Len(t, key, 32)
	st, _ := os.Stat(filepath.Join(state, keyFileName))
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	dst, _ := os.Stat(state)
	assert.Equal(t, os.FileMode(0o700), dst.Mode().Perm())
	again, err := LoadRollbackKey(state, true)
	require.NoError(t, err)
	assert.Equal(t, key, again)
	require.NoError(t, os.Chmod(filepath.Join(state, keyFileName), 0o644))
	_, err = LoadRollbackKey(state, false)
	assert.ErrorContains(t, err, "chmod 600")
}

func TestDecodeRecordIsStrict(t *testing.T) {
	_, err := DecodeRecord([]byte(`{"path":"/a","path":"/b"}`))
	assert.ErrorContains(t, err, "duplicate key")
	_, err = DecodeRecord([]byte(`{"path":"/a","extra":1}`))
	assert.ErrorContains(t, err, "unknown field")
	rec, err := DecodeRecord([]byte(`{"path":"/a","mode":420}`))
	require.NoError(t, err)
	assert.Equal(t, "/a", rec.Path)
}

func FuzzDecodeRecord(f *testing.F) {
	good, _ := json.Marshal(CrashRecord{Version: 1, Path: "/r/a.go", Mode: 0o644, Original: "x", Written: "y"})
	for _, s := range []string{string(good), `{"path":"/a","path":"/b"}`, `{"mode":-1}`, `[]`, `{"mac":"00"}`} {
		f.Add([]byte(s))
	}
	key := make([]byte, 32)
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := DecodeRecord(data)
		if err != nil {
			return
		}
		// Whatever decodes, no forged MAC authenticates and nothing outside root is accepted.
		if rec.Authenticate(key, root) == nil && rec.MAC != rec.mac(key) {
			t.Fatalf("a record with a wrong MAC authenticated: %+v", rec)
		}
	})
}
