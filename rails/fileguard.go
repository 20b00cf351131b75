//go:build unix

package rails

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/untrusted"
)

// The file guard keeps a transform's promise: the file ends as the edit that passed, or as the
// original bytes, mode bits, owner and extended attributes, from the first process locum starts
// (the baseline verify included). Restoring on the way out covers errors and signals; the crash
// record covers what a process cannot catch (SIGKILL, power loss): as the guard is taken, the
// original is copied and synced under the rollback directory and a record names it, and the next
// locum start restores it. A record is authenticated with the operator's secret (see
// rollback.go), since the rollback directory may be one a repository brought along.
//
// A file with more than one hard link is written in place, so every name keeps seeing one
// inode, and only where every one of them is a name in the repository's tree outside its git
// directories (CheckLinks): a link into .git, or out of the repository, is refused before
// anything runs. Any other file is replaced by a new one (atomically) carrying the original's
// attributes. What cannot be kept: the inode number of a file with one link; an attribute this
// user may not set (see atomicfile); and a hard link the verify itself broke (a file it removed
// and wrote anew is another inode, and the other names keep the old one).

// maxGuardedFile bounds the file a guard snapshots: a transform reads it whole to write it back.
const maxGuardedFile = 64 << 20

// FileMeta is what a restore puts back besides the bytes: the mode with its setuid, setgid and
// sticky bits, the owner, and the extended attributes. UID -1 leaves the owner to whoever writes
// the file.
type FileMeta = atomicfile.Meta

func metaOf(st fs.FileInfo) FileMeta {
	m := FileMeta{Mode: st.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), UID: -1, GID: -1}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		m.UID, m.GID = int(sys.Uid), int(sys.Gid)
	}
	return m
}

// fileID is an inode: its device and number.
type fileID struct{ dev, ino uint64 }

func idOf(st fs.FileInfo) fileID {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fileID{dev: uint64(sys.Dev), ino: uint64(sys.Ino)}
	}
	return fileID{}
}

func linksOf(st fs.FileInfo) uint64 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

// FileGuard holds a file's original bytes while it is edited.
type FileGuard struct {
	path     string
	original []byte
	meta     FileMeta
	id       fileID // the file's inode when guarded
	links    uint64 // its hard links then
	dir      fileID // the directory holding it then
	rb       Rollback
	record   *CrashRecord
	lock     *os.File
	restored bool
}

// GuardFile snapshots path (bytes, mode, owner, extended attributes) and, when rb has a directory
// and a key, copies the original into the rollback directory, syncs it, writes the crash record
// that names it, and locks the copy for as long as the guard lives, so a recovery started by
// another locum process leaves a live edit alone. The record is there before the guard returns:
// whatever the caller runs next (a verify) may change the file.
func GuardFile(path string, rb Rollback) (*FileGuard, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Lstat(abs)
	if err != nil {
		return nil, err
	}
	data, err := untrusted.ReadFile(abs, maxGuardedFile)
	if err != nil {
		return nil, err
	}
	xattrs, err := xattrsOf(abs, idOf(st))
	if err != nil {
		return nil, err
	}
	dst, err := os.Lstat(filepath.Dir(abs))
	if err != nil {
		return nil, err
	}
	g := &FileGuard{path: abs, original: data, meta: metaOf(st), id: idOf(st), links: linksOf(st), dir: idOf(dst), rb: rb}
	if g.links > 1 {
		// Written in place, an edit reaches every name of the file.
		if err := inPlaceOK(rb.Root, abs, st); err != nil {
			return nil, err
		}
	}
	g.meta.Xattrs = xattrs
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
	if err := g.saveRecord(); err != nil {
		g.Release()
		return nil, err
	}
	return g, nil
}

// xattrsOf reads the extended attributes of the regular file at path, which must still be the
// inode id.
func xattrsOf(path string, id fileID) (map[string][]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || idOf(st) != id {
		return nil, fmt.Errorf("%s changed while locum read it", path)
	}
	return atomicfile.ReadXattrs(f)
}

// Original is the file's bytes as they were.
func (g *FileGuard) Original() []byte { return g.original }

// Mode is the file's mode bits as they were, setuid, setgid and sticky included.
func (g *FileGuard) Mode() fs.FileMode { return g.meta.Mode }

// Write replaces the file's content with content, keeping its mode, owner and extended
// attributes, and its inode where it has other hard links. The crash record learns the new
// content's hash first, so a crash between the two (or in the middle of an in-place write) still
// restores.
func (g *FileGuard) Write(content []byte) error {
	if err := g.sameDir(); err != nil {
		return err
	}
	if g.record != nil {
		g.record.Written = hash(content)
		if err := g.saveRecord(); err != nil {
			return err
		}
	}
	g.restored = false
	return g.put(content)
}

// put writes content at the path: in place where the file there is the guarded inode and that
// had more than one link, else as a new file.
func (g *FileGuard) put(content []byte) error {
	if st, err := os.Lstat(g.path); err == nil && st.Mode().IsRegular() && g.links > 1 && idOf(st) == g.id {
		return atomicfile.WriteInPlace(g.path, content, g.meta, func(st fs.FileInfo) bool { return idOf(st) == g.id })
	}
	return atomicfile.WriteMeta(g.path, content, g.meta)
}

// sameDir refuses a write through a folder that is no longer the one the file was guarded in:
// a verify can swap a folder of the tree for a symbolic link to one outside it.
func (g *FileGuard) sameDir() error {
	dir := filepath.Dir(g.path)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("its folder %s: %w", dir, err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("its folder %s: %w", dir, err)
	}
	if real != dir || !st.IsDir() || idOf(st) != g.dir {
		return fmt.Errorf("its folder %s was replaced (by a link or another folder) since locum read the file; nothing is written through it", dir)
	}
	return nil
}

// Intact reports whether the file is exactly as the guard found it: a regular file, neither a
// link nor a folder, with the original bytes, mode, owner and extended attributes. A file that
// cannot be read is not intact.
func (g *FileGuard) Intact() bool { return g.Holds(g.original) }

// Holds reports whether the file is content with the original's mode, owner and extended
// attributes, a regular file in the folder it was guarded in: what a Write of content left.
func (g *FileGuard) Holds(content []byte) bool {
	if g.sameDir() != nil {
		return false
	}
	st, err := os.Lstat(g.path)
	if err != nil || !st.Mode().IsRegular() {
		return false
	}
	m := metaOf(st)
	if m.Mode != g.meta.Mode || m.UID != g.meta.UID || m.GID != g.meta.GID {
		return false
	}
	data, err := untrusted.ReadFile(g.path, maxGuardedFile)
	if err != nil || !bytes.Equal(data, content) {
		return false
	}
	x, err := xattrsOf(g.path, idOf(st))
	return err == nil && sameXattrs(x, g.meta.Xattrs)
}

// sameXattrs compares two files' extended attributes but for security.*: the kernel and its
// security modules set those on a new file themselves (an SELinux label), and a user without the
// privilege cannot set them, so a file locum wrote may differ there without anyone changing it.
func sameXattrs(a, b map[string][]byte) bool {
	strip := func(m map[string][]byte) map[string][]byte {
		out := maps.Clone(m)
		maps.DeleteFunc(out, func(k string, _ []byte) bool { return strings.HasPrefix(k, "security.") })
		return out
	}
	return maps.EqualFunc(strip(a), strip(b), bytes.Equal)
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

// Restore puts the original bytes, mode, owner and extended attributes back (in place for a file
// of several hard links, else atomically) and reads the file back to check it. Until that check
// passes the rollback copy stays. A folder where the file was is removed if it is empty, else
// left for the person to look at, and the restore fails. Nothing is written through a folder
// that was replaced since the guard was taken.
func (g *FileGuard) Restore() error {
	err := g.sameDir()
	if err == nil {
		err = g.clearDir()
	}
	if err == nil {
		err = g.put(g.original)
	}
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

// clearDir removes an empty folder where the file was; one with something in it is the
// person's, and an error.
func (g *FileGuard) clearDir() error {
	st, err := os.Lstat(g.path)
	if err != nil || !st.IsDir() {
		return nil
	}
	if err := os.Remove(g.path); err != nil {
		return fmt.Errorf("%s is a folder now, and not an empty one: %w", g.path, err)
	}
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
