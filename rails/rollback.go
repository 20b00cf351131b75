//go:build unix

package rails

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/untrusted"
)

// A rollback directory sits under the repository's git directory, or under .locum outside one:
// places a repository can bring along (a committed .locum/rollback, or a .git file pointing at a
// committed folder). So a record is acted on only when this user's locum wrote it: each carries an
// HMAC, keyed with a secret in the operator's state directory, over every field it is acted on
// by. A record that fails the check, or names a file outside the repository, through a symbolic
// link, or not a regular file, is never restored and never deleted; it is reported with how to
// remove it.

const (
	recordVersion = 1
	keyFileName   = "rollback.key"
	maxRecord     = 64 << 10
)

// Rollback is where crash records live, the repository they may name files of, and the key that
// authenticates them.
type Rollback struct {
	Dir  string
	Root string
	// Key is the operator's secret; nil when there is none, and then no record is written and
	// none found is trusted.
	Key []byte
}

// CrashRecord is what the guard leaves under the rollback directory while a file is edited.
type CrashRecord struct {
	Version  int       `json:"version"`
	Path     string    `json:"path"`
	Mode     uint32    `json:"mode"` // an fs.FileMode: permission, setuid, setgid and sticky bits
	UID      int       `json:"uid"`
	GID      int       `json:"gid"`
	Size     int64     `json:"size"`
	Original string    `json:"original_sha256"`
	Written  string    `json:"written_sha256"`
	PID      int       `json:"pid"`
	Started  time.Time `json:"started"`
	MAC      string    `json:"mac"`
	// RecordFile is where the record was read from or is written to.
	RecordFile string `json:"-"`
}

// macInput is every field a record is acted on by, in one unambiguous text.
func (r *CrashRecord) macInput() []byte {
	return fmt.Appendf(nil, "locum rollback record\nversion=%d\npath=%q\nmode=%d\nuid=%d\ngid=%d\nsize=%d\noriginal=%s\nwritten=%s\npid=%d\nstarted=%s\n",
		r.Version, r.Path, r.Mode, r.UID, r.GID, r.Size, r.Original, r.Written, r.PID, r.Started.UTC().Format(time.RFC3339Nano))
}

func (r *CrashRecord) mac(key []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write(r.macInput())
	return hex.EncodeToString(m.Sum(nil))
}

// seal sets the record's MAC and returns it as JSON.
func (r *CrashRecord) seal(key []byte) ([]byte, error) {
	r.MAC = r.mac(key)
	return json.MarshalIndent(r, "", "  ")
}

// DecodeRecord reads a record's JSON strictly: one object, no key named twice, no unknown key.
func DecodeRecord(data []byte) (CrashRecord, error) {
	var rec CrashRecord
	if err := untrusted.CheckKeys(data); err != nil {
		return rec, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return rec, err
	}
	return rec, nil
}

// Authenticate checks that the record was sealed with key and that it may be acted on in root: a
// path inside root, with no symbolic link on the way. (Whether a regular file is there now is
// the state of the file, not of the record: see targetProblem.)
func (r *CrashRecord) Authenticate(key []byte, root string) error {
	if key == nil || r.MAC == "" || !hmac.Equal([]byte(r.MAC), []byte(r.mac(key))) {
		return errors.New("it was not written by this user's locum (its MAC does not check)")
	}
	if r.Version != recordVersion {
		return fmt.Errorf("it is of version %d, not %d", r.Version, recordVersion)
	}
	if !filepath.IsAbs(r.Path) || filepath.Clean(r.Path) != r.Path {
		return fmt.Errorf("it names %q, not a clean absolute path", r.Path)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(realRoot, r.Path); err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("it names %s, outside the repository %s", r.Path, realRoot)
	}
	real, err := filepath.EvalSymlinks(r.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if dir, derr := filepath.EvalSymlinks(filepath.Dir(r.Path)); derr != nil || dir != filepath.Dir(r.Path) {
			return fmt.Errorf("it names %s, through a symbolic link", r.Path)
		}
		return nil
	case err != nil:
		return err
	case real != r.Path:
		return fmt.Errorf("it names %s, through a symbolic link (to %s)", r.Path, real)
	}
	return nil
}

// targetProblem says why a record's file cannot be written over now: only a regular file (or
// nothing) is; a directory or a device in its place is the user's to sort out.
func targetProblem(path string) string {
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return ""
	case err != nil:
		return err.Error()
	case !st.Mode().IsRegular():
		return path + " is not a regular file now"
	}
	return ""
}

// LoadRollbackKey reads the operator's rollback secret from stateDir; with create, it makes one
// (0600, in a 0700 folder) when there is none. Without create, a missing key is (nil, nil): no
// record can have been written, so none will be trusted.
func LoadRollbackKey(stateDir string, create bool) ([]byte, error) {
	file := filepath.Join(stateDir, keyFileName)
	if _, err := os.Lstat(file); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil, nil
		}
		if err := os.MkdirAll(stateDir, 0o700); err != nil {
			return nil, fmt.Errorf("the state directory for the rollback key: %w", err)
		}
		var secret [32]byte
		if _, err := rand.Read(secret[:]); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY|syscall.O_NOFOLLOW, 0o600)
		if err == nil {
			_, err = f.WriteString(hex.EncodeToString(secret[:]) + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				os.Remove(file)
				return nil, fmt.Errorf("writing the rollback key %s: %w", file, err)
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("creating the rollback key %s: %w", file, err)
		}
	}
	st, err := os.Lstat(file)
	if err != nil {
		return nil, fmt.Errorf("the rollback key %s: %w", file, err)
	}
	if !st.Mode().IsRegular() || st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("the rollback key %s must be a regular file only its owner can read (chmod 600 it)", file)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return nil, fmt.Errorf("the rollback key %s belongs to another user", file)
	}
	data, err := untrusted.ReadFile(file, 1024)
	if err != nil {
		return nil, fmt.Errorf("the rollback key: %w", err)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(key) < 32 {
		return nil, fmt.Errorf("the rollback key %s is not 32 bytes of hex; remove it and locum makes a new one", file)
	}
	return key, nil
}

// makeDir creates the rollback directory and refuses one that is a symbolic link: records and
// copies are written only where the directory really is.
func (rb Rollback) makeDir() error {
	if err := os.MkdirAll(rb.Dir, 0o700); err != nil {
		return fmt.Errorf("rollback directory: %w", err)
	}
	st, err := os.Lstat(rb.Dir)
	if err != nil {
		return fmt.Errorf("rollback directory: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("rollback directory %s is a symbolic link or not a directory; locum writes its copies only into a real directory", rb.Dir)
	}
	return nil
}

// Recovery is what a locum start did, or could not do, about a record an interrupted run left.
type Recovery struct {
	Record CrashRecord
	// Action: "restored" (the file held locum's edit and now holds the original), "cleared"
	// (the file already held the original), "conflict" (the file changed since the crash; nothing
	// was touched), "live" (another locum run holds it), "untrusted" (not a record this user's
	// locum wrote for this repository; never acted on, see Why).
	Action string
	Why    string
	// root is the repository the record was read for, where a restore in place looks for the
	// file's other hard links.
	root string
}

// RemoveHint is how to remove an untrusted record by hand: locum never deletes one itself.
func (r Recovery) RemoveHint() string {
	base := strings.TrimSuffix(r.Record.RecordFile, ".json")
	return fmt.Sprintf("rm -f %s %s", shellQuote(r.Record.RecordFile), shellQuote(base+".orig"))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

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
			untrusted.Escape(c.Record.Path), c.Record.PID, c.Record.Started.Format(time.RFC3339))
	}
	return msg + "\nresolve it: locum recover --list, then locum recover --restore PATH (put the original back) or locum recover --discard PATH (keep the file as it is)"
}

// ListRecords reads the crash records in rb.Dir and says what recovery would do with each.
func ListRecords(rb Rollback) ([]Recovery, error) {
	entries, err := os.ReadDir(rb.Dir)
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
		file := filepath.Join(rb.Dir, e.Name())
		out = append(out, readRecord(rb, file))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Record.Path != out[j].Record.Path {
			return out[i].Record.Path < out[j].Record.Path
		}
		return out[i].Record.RecordFile < out[j].Record.RecordFile
	})
	return out, nil
}

func readRecord(rb Rollback, file string) Recovery {
	untrustedRec := func(rec CrashRecord, why string) Recovery {
		rec.RecordFile = file
		return Recovery{Record: rec, Action: "untrusted", Why: why}
	}
	data, err := untrusted.ReadFile(file, maxRecord)
	if err != nil {
		return untrustedRec(CrashRecord{}, "it cannot be read as a record: "+err.Error())
	}
	rec, err := DecodeRecord(data)
	if err != nil {
		return untrustedRec(CrashRecord{}, "it is not a record locum wrote: "+err.Error())
	}
	rec.RecordFile = file
	if err := rec.Authenticate(rb.Key, rb.Root); err != nil {
		return untrustedRec(rec, err.Error())
	}
	if filepath.Base(file) != recordName(rec.Path)+".json" {
		return untrustedRec(rec, "its name does not match the file it names")
	}
	return Recovery{Record: rec, Action: classifyRecord(rec), root: rb.Root}
}

func classifyRecord(rec CrashRecord) string {
	base := strings.TrimSuffix(rec.RecordFile, ".json")
	if lock, err := os.OpenFile(base+".orig", os.O_RDWR|syscall.O_NOFOLLOW, 0); err == nil {
		busy := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil
		if !busy {
			_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
		lock.Close()
		if busy {
			return "live"
		}
	}
	if targetProblem(rec.Path) != "" {
		return "conflict"
	}
	current, err := untrusted.ReadFile(rec.Path, maxGuardedFile)
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
// untouched and returned in a *ConflictError. Untrusted records are returned with the rest and
// left exactly as they are. What the interrupted runs' verifies left running is ended first (see
// ReapOrphans), and the records looked at again: a verify still running could write the file
// after it is restored, or between the look and the restore.
func Recover(rb Rollback) ([]Recovery, error) {
	recs, err := ListRecords(rb)
	if err != nil {
		return nil, err
	}
	if slices.ContainsFunc(recs, func(r Recovery) bool { return r.Action != "live" && r.Action != "untrusted" }) {
		ReapOrphans()
		if recs, err = ListRecords(rb); err != nil {
			return nil, err
		}
	}
	var done []Recovery
	var conflicts []Recovery
	for _, r := range recs {
		switch r.Action {
		case "restored":
			if err := RestoreRecord(r); err != nil {
				return done, err
			}
			done = append(done, r)
		case "cleared":
			if err := DiscardRecord(r); err != nil {
				return done, err
			}
		case "conflict":
			conflicts = append(conflicts, r)
		case "untrusted":
			done = append(done, r)
		}
	}
	if len(conflicts) > 0 {
		return done, &ConflictError{Conflicts: conflicts}
	}
	return done, nil
}

// UntrustedRecordError refuses to act on a record locum cannot authenticate.
type UntrustedRecordError struct{ Recovery Recovery }

func (e *UntrustedRecordError) Error() string {
	return fmt.Sprintf("locum will not act on the rollback record %s: %s; remove it by hand if it is not yours: %s",
		untrusted.Escape(e.Recovery.Record.RecordFile), untrusted.Escape(e.Recovery.Why), untrusted.Escape(e.Recovery.RemoveHint()))
}

// RestoreRecord puts a record's original bytes, mode and owner back, checks them by reading the
// file back, and only then removes the record and its copy.
func RestoreRecord(r Recovery) error {
	if r.Action == "untrusted" {
		return &UntrustedRecordError{Recovery: r}
	}
	rec := r.Record
	if p := targetProblem(rec.Path); p != "" {
		return &RestoreError{Path: rec.Path, Kept: strings.TrimSuffix(rec.RecordFile, ".json") + ".orig", Reason: errors.New(p)}
	}
	orig, err := untrusted.ReadFile(strings.TrimSuffix(rec.RecordFile, ".json")+".orig", max(rec.Size, 0))
	if err != nil {
		return fmt.Errorf("the original of %s is missing from the rollback record: %w", rec.Path, err)
	}
	if hash(orig) != rec.Original {
		return fmt.Errorf("the rollback copy of %s does not match its recorded hash; restore it by hand from %s", rec.Path, strings.TrimSuffix(rec.RecordFile, ".json")+".orig")
	}
	meta := FileMeta{Mode: fs.FileMode(rec.Mode) & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky), UID: rec.UID, GID: rec.GID}
	if err := putRecorded(r.root, rec.Path, orig, meta); err != nil {
		return &RestoreError{Path: rec.Path, Kept: strings.TrimSuffix(rec.RecordFile, ".json") + ".orig", Reason: err}
	}
	if err := checkRestored(rec.Path, rec.Original); err != nil {
		return &RestoreError{Path: rec.Path, Kept: strings.TrimSuffix(rec.RecordFile, ".json") + ".orig", Reason: err}
	}
	return DiscardRecord(r)
}

// putRecorded writes a record's original back to path in the repository at root. The record
// holds no extended attributes and no inode: an edit kept both on the file it wrote, so the file
// as it is now has them. A file of several hard links is written in place (the edit wrote it in
// place too), and only where every one is a name in the tree outside its git directories: a link
// made since into .git, or out of the repository, is refused (*HardLinkError) and the copy kept.
// Any other file is a new file given the attributes the current one carries.
func putRecorded(root, path string, orig []byte, meta FileMeta) error {
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() {
		return atomicfile.WriteMeta(path, orig, meta)
	}
	id := idOf(st)
	if linksOf(st) > 1 {
		if err := inPlaceOK(root, path, st); err != nil {
			return err
		}
		return atomicfile.WriteInPlace(path, orig, meta, func(st fs.FileInfo) bool { return idOf(st) == id })
	}
	x, err := xattrsOf(path, id)
	if err != nil {
		return err
	}
	meta.Xattrs = x
	return atomicfile.WriteMeta(path, orig, meta)
}

// DiscardRecord removes a record and its copy, keeping the file as it is. An untrusted record is
// never removed by locum.
func DiscardRecord(r Recovery) error {
	if r.Action == "untrusted" {
		return &UntrustedRecordError{Recovery: r}
	}
	base := strings.TrimSuffix(r.Record.RecordFile, ".json")
	os.Remove(r.Record.RecordFile)
	os.Remove(base + ".orig")
	return nil
}
