package engine

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/untrusted"
)

// RepoStateDir is where locum keeps what it writes for a repository when it has no git directory
// it can trust: root/.locum/rel, if that stays inside the repository after symbolic links, else
// the operator's state directory, keyed by the repository's path.
func RepoStateDir(root, rel string) string {
	if p, err := untrusted.Confine(root, filepath.Join(".locum", filepath.FromSlash(rel))); err == nil {
		return p
	}
	dirs, err := packs.FindUserDirs(nil)
	if err != nil {
		return filepath.Join(os.TempDir(), "locum-"+strconv.Itoa(os.Getuid()), rel)
	}
	sum := sha256.Sum256([]byte(root))
	return filepath.Join(dirs.State, "repos", hex.EncodeToString(sum[:8]), filepath.FromSlash(rel))
}

// RunsDir is where run journals live: under the git directory in a repository, else in the
// user's state directory.
func RunsDir(root string) (string, error) {
	if p := gitsafe.GitPath(root, "locum/runs"); p != "" {
		return p, nil
	}
	state := os.Getenv("XDG_STATE_HOME")
	if state == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no git directory and no home directory for the run journal: %w", err)
		}
		state = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(state, "locum", "runs"), nil
}

// NewRunID names a run by its start time, sortable, with a random suffix.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runIDPattern is the shape NewRunID gives a run id. A branch name is made from it, so an id read
// back from a journal's file name is checked against it first.
var runIDPattern = regexp.MustCompile(`^[0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}$`)

// ValidRunID reports whether id has the shape of a run id.
func ValidRunID(id string) bool { return runIDPattern.MatchString(id) }

// JournalVersion is the format of the journal run_start names in journal_version. A journal
// without the field predates it and reads as version 0: the same events, fewer fields.
const JournalVersion = 1

// Journal appends one JSON line per event of a run. A journal that cannot be written warns once
// and stops writing; the run goes on, since losing the log must not lose the work. A journal
// given the operator's key (Seal) ends, when closed, in a seal line over every byte it wrote:
// what the ledger and the break-even count.
type Journal struct {
	mu     sync.Mutex
	path   string
	runID  string
	file   *os.File
	failed error
	now    func() time.Time
	// key and digest seal the journal: digest is the SHA-256 of every byte written so far.
	key    []byte
	digest hash.Hash
}

// OpenJournal opens (creating) the journal file at path for run id.
func OpenJournal(path, runID string) (*Journal, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return &Journal{path: path, runID: runID, failed: err, now: time.Now}, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return &Journal{path: path, runID: runID, failed: err, now: time.Now}, err
	}
	// The writer holds the journal locked while its run lives: the lock goes with the process,
	// however it ends, so a journal with no run_end and no lock is of a run that died (JournalLive).
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	return &Journal{path: path, runID: runID, file: f, now: time.Now}, nil
}

// JournalLive says the journal at path is still being written by a live locum: its writer's
// lock is held.
func JournalLive(path string) bool {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// Seal makes the journal end, when closed, in a seal under key over every byte it wrote. It
// must come before the first event, and seals nothing where the file held bytes already (the
// seal covers the whole file, and those bytes are not the run's).
func (j *Journal) Seal(key []byte) {
	if j == nil || len(key) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file == nil || j.digest != nil {
		return
	}
	if st, err := j.file.Stat(); err != nil || st.Size() != 0 {
		return
	}
	j.key, j.digest = key, sha256.New()
}

// AppendEvent appends one event to the journal of a run that has ended: a later word on it,
// such as a person's verdict. Where the journal is sealed under key, the event is sealed too: a
// new seal after it covers the file as it now stands. An unsealed journal, or no key, gets the
// event alone. The file must be a regular file already (a link is not followed).
func AppendEvent(path, runID string, ev Event, key []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", untrusted.Escape(path))
	}
	// Two appends at once would each seal the file as it stood before the other's line, and
	// leave it sealed by neither: one at a time, and none while the run still writes it (its
	// writer holds the lock).
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return fmt.Errorf("%s: being written by another locum; try again once it ends", untrusted.Escape(path))
	}
	out := append(eventLine(time.Now(), runID, ev.Kind(), ev), '\n')
	if len(key) > 0 {
		s, err := scan(f, filepath.Base(path), key, nil)
		if err != nil {
			return err
		}
		if s.Sealed {
			s.digest.Write(out)
			out = append(out, sealLine(time.Now(), s.Run, sealMAC(key, s.Run, filepath.Base(path), s.digest.Sum(nil)))...)
		}
	}
	if _, err := f.Write(out); err != nil {
		return err
	}
	return f.Close()
}

// SealJournal appends a seal under key over the journal at path as it stands, naming run id. It
// vouches for every byte already in the file, so it is for a file locum wrote itself (a test's
// fixture); a run's journal is sealed as it is written (Journal.Seal).
func SealJournal(path, runID string, key []byte) error {
	if len(key) == 0 {
		return errors.New("no key to seal the journal with")
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := scan(f, filepath.Base(path), nil, nil)
	if err != nil {
		return err
	}
	if s.Cut {
		return fmt.Errorf("%s: over %d bytes: too long to seal", untrusted.Escape(path), maxJournal)
	}
	if _, err := f.Write(sealLine(time.Now(), runID, sealMAC(key, runID, filepath.Base(path), s.digest.Sum(nil)))); err != nil {
		return err
	}
	return f.Close()
}

// Path is the journal file.
func (j *Journal) Path() string { return j.path }

// Emit appends one event.
func (j *Journal) Emit(ev Event) { j.event(ev.Kind(), ev) }

// event appends one event of kind name with fields, an object's JSON.
func (j *Journal) event(name string, fields any) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file == nil {
		return
	}
	j.write(append(eventLine(j.now(), j.runID, name, fields), '\n'))
}

// write writes one line, counting it into the seal; a failed write ends the journal.
func (j *Journal) write(line []byte) {
	if _, err := j.file.Write(line); err != nil {
		j.failed = err
		j.file.Close()
		j.file = nil
		return
	}
	if j.digest != nil {
		j.digest.Write(line)
	}
}

// eventLine is one event as the journal has it, without its newline: the fields' own keys and
// ts, run and event, sorted as encoding/json sorts a map's keys, each value as its type encodes
// it. A line's shape so depends on its fields' names alone, never on the order they are declared.
func eventLine(now time.Time, runID, name string, fields any) []byte {
	ts := now.UTC().Format(time.RFC3339Nano)
	rec := map[string]json.RawMessage{}
	data, err := json.Marshal(fields)
	if err == nil && string(data) != "null" {
		err = json.Unmarshal(data, &rec)
	}
	var line []byte
	if err == nil {
		rec["ts"], _ = json.Marshal(ts)
		rec["run"], _ = json.Marshal(runID)
		rec["event"], _ = json.Marshal(name)
		line, err = json.Marshal(rec)
	}
	if err != nil {
		line, _ = json.Marshal(map[string]any{"ts": ts, "run": runID, "event": name, "journal_error": err.Error()})
	}
	return line
}

// EventKind is the kind an event read back names, "" where it names none.
func EventKind(ev map[string]any) string {
	kind, _ := ev["event"].(string)
	return kind
}

// EventTime is when an event read back says it was written; zero where it does not say.
func EventTime(ev map[string]any) time.Time {
	ts, _ := ev["ts"].(string)
	t, _ := time.Parse(time.RFC3339Nano, ts)
	return t
}

// DecodeEvent reads ev, an event as a journal reader keeps it, as an E: false where ev is of
// another kind. A value of another JSON type than E's field is left zero, as the rest of the
// event is still read: a journal is the repository's file, and an older locum's.
func DecodeEvent[E Event](ev map[string]any) (E, bool) {
	var e E
	if EventKind(ev) != e.Kind() {
		return e, false
	}
	data, err := json.Marshal(ev)
	if err != nil {
		return e, false
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(data, &e); err != nil && !errors.As(err, &typeErr) {
		var zero E
		return zero, false
	}
	return e, true
}

// Err is the first error writing the journal, if any.
func (j *Journal) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed
}

// Close seals the journal, where it has a key and every write went through, and closes it.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.file == nil {
		return nil
	}
	if j.digest != nil {
		j.write(sealLine(j.now(), j.runID, sealMAC(j.key, j.runID, filepath.Base(j.path), j.digest.Sum(nil))))
		if j.file == nil {
			return j.failed
		}
	}
	err := j.file.Close()
	j.file = nil
	return err
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// EventLine renders one journal event for a person: time, event, then its fields as key=value.
func EventLine(ev map[string]any) string {
	ts, _ := ev["ts"].(string)
	if len(ts) >= 23 {
		ts = ts[11:23]
	}
	name, _ := ev["event"].(string)
	keys := make([]string, 0, len(ev))
	for k := range ev {
		if k != "ts" && k != "event" && k != "run" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	// A journal is the repository's file: what it says is shown, never obeyed.
	fmt.Fprintf(&b, "%s %-10s", untrusted.Escape(ts), untrusted.Escape(name))
	for _, k := range keys {
		v := ev[k]
		if v == nil {
			continue
		}
		var text string
		switch x := v.(type) {
		case string:
			text = x
			if len(text) > 200 {
				text = text[:200] + "..."
			}
			text = untrusted.Escape(text)
			if strings.ContainsAny(text, " \"") {
				text = strconv.Quote(text)
			}
		default:
			data, _ := json.Marshal(x)
			text = untrusted.Escape(string(data))
		}
		fmt.Fprintf(&b, " %s=%s", untrusted.Escape(k), text)
	}
	return b.String()
}
