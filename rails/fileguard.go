//go:build unix

package rails

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/untrusted"
)

// The file guard keeps a transform's promise: the file ends as the edit that passed, or as the
// original bytes, mode bits and owner. Restoring on the way out covers errors and signals; the
// crash record covers what a process cannot catch (SIGKILL, power loss): before the first write,
// the original is recorded under the rollback directory, and the next locum start restores it.
// A record is authenticated with the operator's secret (see rollback.go), since the rollback
// directory may be one a repository brought along.

// maxGuardedFile bounds the file a guard snapshots: a transform reads it whole to write it back.
const maxGuardedFile = 64 << 20

// FileMeta is what a restore puts back besides the bytes: the mode with its setuid, setgid and
// sticky bits, and the owner. UID -1 leaves the owner to whoever writes the file.
type FileMeta = atomicfile.Meta

func metaOf(st fs.FileInfo) FileMeta {
	m := FileMeta{Mode: st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), UID: -1, GID: -1}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		m.UID, m.GID = int(sys.Uid), int(sys.Gid)
	}
	return m
}

// FileGuard holds a file's original bytes while it is edited.
type FileGuard struct {
	path     string
	original []byte
	meta     FileMeta
	rb       Rollback
	record   *CrashRecord
	lock     *os.File
	restored bool
}

// GuardFile snapshots path and, when rb has a directory and a key, copies the original into the
// rollback directory and locks that copy for as long as the guard lives, so a recovery started by
// another locum process leaves a live edit alone. The crash record itself is written by the first
// Write, since until then the file is untouched.
func GuardFile(path string, rb Rollback) (*FileGuard, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	data, err := untrusted.ReadFile(abs, maxGuardedFile)
	if err != nil {
		return nil, err
	}
	g := &FileGuard{path: abs, original: data, meta: metaOf(st), rb: rb}
	if rb.Dir == "" || rb.Key == nil {
		return g, nil
	}
	if err := rb.makeDir(); err != nil {
		return nil, err
	}
	base := filepath.Join(rb.Dir, recordName(abs))
	if _, err := os.Lstat(base + ".json"); err == nil {
		return nil, fmt.Errorf("%s already has a rollback record (%s): another locum run is editing it, or one was interrupted; run locum recover --list", path, base+".json")
	}
	// O_NOFOLLOW and a single link: a copy planted as a link would make the snapshot overwrite
	// whatever it points at.
	lock, err := os.OpenFile(base+".orig", os.O_CREATE|os.O_RDWR|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rollback copy: %w", err)
	}
	if st, err := lock.Stat(); err != nil || !st.Mode().IsRegular() || st.Sys().(*syscall.Stat_t).Nlink != 1 {
		lock.Close()
		return nil, fmt.Errorf("rollback copy %s is not a plain file of locum's; remove it", base+".orig")
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("%s is being edited by another locum run", path)
	}
	g.lock = lock
	// The copy is complete and synced before any record points at it.
	if err := lock.Truncate(0); err != nil {
		g.Release()
		return nil, fmt.Errorf("rollback copy: %w", err)
	}
	if _, err := lock.WriteAt(data, 0); err != nil {
		g.Release()
		return nil, fmt.Errorf("rollback copy: %w", err)
	}
	if err := lock.Sync(); err != nil {
		g.Release()
		return nil, fmt.Errorf("rollback copy: %w", err)
	}
	sum := hash(data)
	g.record = &CrashRecord{
		Version: recordVersion, Path: abs, Mode: uint32(g.meta.Mode), UID: g.meta.UID, GID: g.meta.GID, Size: int64(len(data)),
		Original: sum, Written: sum, PID: os.Getpid(), Started: time.Now().UTC().Truncate(time.Second), RecordFile: base + ".json",
	}
	return g, nil
}

// Original is the file's bytes as they were.
func (g *FileGuard) Original() []byte { return g.original }

// Mode is the file's mode bits as they were, setuid, setgid and sticky included.
func (g *FileGuard) Mode() fs.FileMode { return g.meta.Mode }

// Write replaces the file atomically with content, keeping its mode and owner. The crash record
// learns the new content's hash first, so a crash between the two still restores.
func (g *FileGuard) Write(content []byte) error {
	if g.record != nil {
		g.record.Written = hash(content)
		if err := g.saveRecord(); err != nil {
			return err
		}
	}
	g.restored = false
	return atomicfile.WriteMeta(g.path, content, g.meta)
}

// RestoreError is a restore that did not put the original back. The rollback record and its copy
// are kept, so `locum recover --restore` can try again once the cause is fixed.
type RestoreError struct {
	Path   string
	Kept   string // the rollback copy that still holds the original; "" when none was kept
	Reason error
}

func (e *RestoreError) Error() string {
	msg := fmt.Sprintf("could not restore %s: %v", e.Path, e.Reason)
	if e.Kept != "" {
		msg += fmt.Sprintf("; the original is kept in %s: fix the cause, then run locum recover --restore %s", e.Kept, e.Path)
	}
	return msg
}

func (e *RestoreError) Unwrap() error { return e.Reason }

// Restore puts the original bytes, mode and owner back, atomically, and reads the file back to
// check it. Until that check passes the rollback copy stays.
func (g *FileGuard) Restore() error {
	err := atomicfile.WriteMeta(g.path, g.original, g.meta)
	if err == nil {
		err = checkRestored(g.path, hash(g.original))
	}
	if err != nil {
		kept := ""
		if g.record != nil && g.lock != nil {
			kept = g.lock.Name()
		}
		return &RestoreError{Path: g.path, Kept: kept, Reason: err}
	}
	g.restored = true
	return nil
}

// Release removes the crash record and its copy: the verdict is in and the file is as it should
// stay. After a failed Restore, call Keep instead.
func (g *FileGuard) Release() {
	if g.record != nil {
		os.Remove(g.record.RecordFile)
		g.record = nil
	}
	if g.lock != nil {
		os.Remove(g.lock.Name())
		g.lock.Close()
		g.lock = nil
	}
}

// Keep drops the guard's lock and keeps its crash record and copy, for the next start or
// `locum recover` to restore: after a restore that failed, or (in the offline checks) to stand
// for a process killed mid-edit.
func (g *FileGuard) Keep() {
	if g.lock != nil {
		g.lock.Close()
		g.lock = nil
	}
	g.record = nil
}

func (g *FileGuard) saveRecord() error {
	data, err := g.record.seal(g.rb.Key)
	if err != nil {
		return err
	}
	if err := atomicfile.WriteMeta(g.record.RecordFile, data, FileMeta{Mode: 0o600, UID: -1}); err != nil {
		return fmt.Errorf("rollback record: %w", err)
	}
	return nil
}

// checkRestored reads the file back and compares it with the original's hash.
func checkRestored(path, want string) error {
	data, err := untrusted.ReadFile(path, maxGuardedFile)
	if err != nil {
		return fmt.Errorf("reading it back: %w", err)
	}
	if hash(data) != want {
		return errors.New("reading it back found other bytes than the original")
	}
	return nil
}

func hash(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func recordName(abs string) string {
	s := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(s[:8])
}
