//go:build unix

package rails

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"
)

// The file guard keeps a transform's promise: the file ends as the edit that passed, or as the
// original bytes and mode. Restoring on the way out covers errors and signals; the crash record
// covers what a process cannot catch (SIGKILL, power loss): before the first write, the original
// is recorded under the git directory, and the next locum start restores it.

// CrashRecord is what the guard leaves under the rollback directory while a file is edited.
type CrashRecord struct {
	Path       string      `json:"path"`
	Mode       fs.FileMode `json:"mode"`
	Original   string      `json:"original_sha256"`
	Written    string      `json:"written_sha256"`
	PID        int         `json:"pid"`
	Started    time.Time   `json:"started"`
	RecordFile string      `json:"-"`
}

// FileGuard holds a file's original bytes while it is edited.
type FileGuard struct {
	path     string
	original []byte
	mode     fs.FileMode
	dir      string // rollback directory; "" when no crash record is kept
	record   *CrashRecord
	lock     *os.File
	restored bool
}

// GuardFile snapshots path and, when rollbackDir is set, copies the original into the rollback
// directory and locks that copy for as long as the guard lives, so a recovery started by another
// locum process leaves a live edit alone. The crash record itself is written by the first Write,
// since until then the file is untouched.
func GuardFile(path string, rollbackDir string) (*FileGuard, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	g := &FileGuard{path: abs, original: data, mode: st.Mode().Perm(), dir: rollbackDir}
	if rollbackDir == "" {
		return g, nil
	}
	if err := os.MkdirAll(rollbackDir, 0o700); err != nil {
		return nil, fmt.Errorf("rollback directory: %w", err)
	}
	base := filepath.Join(rollbackDir, recordName(abs))
	if _, err := os.Stat(base + ".json"); err == nil {
		return nil, fmt.Errorf("%s already has a rollback record (%s): another locum run is editing it, or one was interrupted; run locum recover --list", path, base+".json")
	}
	lock, err := os.OpenFile(base+".orig", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("rollback copy: %w", err)
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
	g.record = &CrashRecord{Path: abs, Mode: g.mode, Original: sum, Written: sum, PID: os.Getpid(), Started: time.Now().UTC(), RecordFile: base + ".json"}
	return g, nil
}

// Original is the file's bytes as they were.
func (g *FileGuard) Original() []byte { return g.original }

// Mode is the file's permission bits as they were.
func (g *FileGuard) Mode() fs.FileMode { return g.mode }

// Write replaces the file atomically with content, keeping its mode. The crash record learns
// the new content's hash first, so a crash between the two still restores.
func (g *FileGuard) Write(content []byte) error {
	if g.record != nil {
		g.record.Written = hash(content)
		if err := g.saveRecord(); err != nil {
			return err
		}
	}
	g.restored = false
	return WriteAtomic(g.path, content, g.mode)
}

// Restore puts the original bytes and mode back, atomically.
func (g *FileGuard) Restore() error {
	if err := WriteAtomic(g.path, g.original, g.mode); err != nil {
		return fmt.Errorf("restoring %s: %w", g.path, err)
	}
	g.restored = true
	return nil
}

// Release removes the crash record and its lock: the verdict is in and the file is as it should
// stay.
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

// Abandon drops the guard's lock and keeps its crash record, as a process killed mid-edit
// would: the offline checks use it to prove that the next start restores the file.
func (g *FileGuard) Abandon() {
	if g.lock != nil {
		g.lock.Close()
		g.lock = nil
	}
	g.record = nil
}

func (g *FileGuard) saveRecord() error {
	data, err := json.MarshalIndent(g.record, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteAtomic(g.record.RecordFile, data, 0o600); err != nil {
		return fmt.Errorf("rollback record: %w", err)
	}
	return nil
}

// WriteAtomic writes content to path through a temporary file in the same directory and a
// rename, with mode, and syncs it, so the path holds either the old bytes or the new.
func WriteAtomic(path string, content []byte, mode fs.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".locum-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if _, err := tmp.Write(content); err != nil {
		return fail(err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
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

// Recovery is what a locum start did, or could not do, about a record an interrupted run left.
type Recovery struct {
	Record CrashRecord
	// Action: "restored" (the file held locum's edit and now holds the original), "cleared"
	// (the file already held the original), "conflict" (the file changed since the crash; nothing
	// was touched), "live" (another locum run holds it).
	Action string
}

// ConflictError is a file that changed after an interrupted run: locum will not guess which
// version to keep.
type ConflictError struct {
	Conflicts []Recovery
}

func (e *ConflictError) Error() string {
	msg := ""
	for i, c := range e.Conflicts {
		if i > 0 {
			msg += "\n"
		}
		msg += fmt.Sprintf("locum: %s was being edited by a run that was interrupted (pid %d, %s), and changed since; locum will not guess which version to keep",
			c.Record.Path, c.Record.PID, c.Record.Started.Format(time.RFC3339))
	}
	return msg + "\nresolve it: locum recover --list, then locum recover --restore PATH (put the original back) or locum recover --discard PATH (keep the file as it is)"
}

// ListRecords reads the crash records in dir and says what recovery would do with each.
func ListRecords(dir string) ([]Recovery, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Recovery
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" {
			continue
		}
		file := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		var rec CrashRecord
		if json.Unmarshal(data, &rec) != nil {
			continue
		}
		rec.RecordFile = file
		out = append(out, Recovery{Record: rec, Action: classifyRecord(rec)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Record.Path < out[j].Record.Path })
	return out, nil
}

func classifyRecord(rec CrashRecord) string {
	base := rec.RecordFile[:len(rec.RecordFile)-len(".json")]
	if lock, err := os.OpenFile(base+".orig", os.O_RDWR, 0); err == nil {
		busy := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
		if !busy {
			_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
		lock.Close()
		if busy {
			return "live"
		}
	}
	current, err := os.ReadFile(rec.Path)
	switch {
	case err != nil:
		return "conflict"
	case hash(current) == rec.Original:
		return "cleared"
	case hash(current) == rec.Written:
		return "restored"
	}
	return "conflict"
}

// Recover restores every file an interrupted run left edited, clears records whose file already
// holds the original, and leaves records of live runs alone. Files that changed since are left
// untouched and returned in a *ConflictError.
func Recover(dir string) ([]Recovery, error) {
	recs, err := ListRecords(dir)
	if err != nil {
		return nil, err
	}
	var done []Recovery
	var conflicts []Recovery
	for _, r := range recs {
		switch r.Action {
		case "restored":
			if err := RestoreRecord(r.Record); err != nil {
				return done, err
			}
			done = append(done, r)
		case "cleared":
			DiscardRecord(r.Record)
		case "conflict":
			conflicts = append(conflicts, r)
		}
	}
	if len(conflicts) > 0 {
		return done, &ConflictError{Conflicts: conflicts}
	}
	return done, nil
}

// RestoreRecord puts a record's original bytes and mode back and removes the record.
func RestoreRecord(rec CrashRecord) error {
	base := rec.RecordFile[:len(rec.RecordFile)-len(".json")]
	orig, err := os.ReadFile(base + ".orig")
	if err != nil {
		return fmt.Errorf("the original of %s is missing from the rollback record: %w", rec.Path, err)
	}
	if hash(orig) != rec.Original {
		return fmt.Errorf("the rollback copy of %s does not match its recorded hash; restore it by hand from %s", rec.Path, base+".orig")
	}
	if err := WriteAtomic(rec.Path, orig, rec.Mode); err != nil {
		return fmt.Errorf("restoring %s: %w", rec.Path, err)
	}
	DiscardRecord(rec)
	return nil
}

// DiscardRecord removes a record, keeping the file as it is.
func DiscardRecord(rec CrashRecord) {
	base := rec.RecordFile[:len(rec.RecordFile)-len(".json")]
	os.Remove(rec.RecordFile)
	os.Remove(base + ".orig")
}
