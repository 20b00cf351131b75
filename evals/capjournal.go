package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/locumdev/locum/untrusted"
)

// journalLimit bounds what a resume reads of a capture journal: k = 5 turns of three tasks and two
// arms, each output capped by the host limit, fit well inside it.
const journalLimit = 256 << 20

// captureJournal is the append-only file of a capture's finished turns. Each line is written with
// one write and synced before the next turn starts, so a crash can cut only the last line short.
type captureJournal struct {
	path string
	f    *os.File
	// digests are the local models' digests the journal recorded, if any.
	digests map[string]string
}

// JournalCorruptError is a journal with a complete line that is not a journal entry: not a torn
// write, which resume repairs, but something locum did not write.
type JournalCorruptError struct {
	Path string
	Line int
}

func (e *JournalCorruptError) Error() string {
	return fmt.Sprintf("the capture journal %s has a line (%d) that is not a journal entry; locum did not write it so, and will not guess which turns it held: move the journal aside yourself to start over (its host turns were paid for)",
		e.Path, e.Line)
}

// openCaptureJournal opens the journal of a capture under cond for appending, returning the turns
// it holds and the host version it recorded. A new journal starts with the conditions; a last
// line cut short by a crash is cut off, and logf says so, so the next turn starts a line of its
// own instead of merging into the torn one.
func openCaptureJournal(path string, cond Conditions, logf func(string, ...any)) (*captureJournal, map[string]Turn, string, error) {
	done, version, digests, keep, torn, err := readJournal(path, cond)
	if err != nil {
		return nil, nil, "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, nil, "", fmt.Errorf("capture journal: %w", err)
	}
	if torn > 0 {
		if err := os.Truncate(path, keep); err != nil {
			return nil, nil, "", fmt.Errorf("capture journal: cutting a torn last line: %w", err)
		}
		if done != nil {
			logf("the capture journal's last line was cut short (%d bytes, a crash mid-write); cut back to its last complete line\n", torn)
		}
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, nil, "", fmt.Errorf("capture journal: %w", err)
	}
	j := &captureJournal{path: path, f: f, digests: digests}
	if done == nil {
		if err := j.write(journalLine{Kind: "conditions", Conditions: &cond}); err != nil {
			f.Close()
			return nil, nil, "", err
		}
		done = map[string]Turn{}
	}
	return j, done, version, nil
}

// write appends one line with a single write, then syncs it.
func (j *captureJournal) write(l journalLine) error {
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if _, err := j.f.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("capture journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("capture journal: %w", err)
	}
	return nil
}

func (j *captureJournal) close() error { return j.f.Close() }

// readJournal reads a journal taken under cond: its turns (nil when there is none to resume), the
// host version it recorded, how many bytes to keep, and how many bytes after them to cut (a torn
// last line; or everything, for a journal that holds no turn). A journal that holds turns taken
// under other conditions is a *JournalMismatchError.
func readJournal(path string, cond Conditions) (done map[string]Turn, version string, digests map[string]string, keep, torn int64, err error) {
	data, err := readRegularLimited(path, journalLimit)
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", nil, 0, 0, nil
	}
	if err != nil {
		return nil, "", nil, 0, 0, fmt.Errorf("capture journal: %w", err)
	}
	return parseJournal(path, data, cond)
}

// parseJournal is readJournal on the bytes of the journal at path.
func parseJournal(path string, data []byte, cond Conditions) (done map[string]Turn, version string, digests map[string]string, keep, torn int64, err error) {
	var mismatch []string
	complete := data
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		complete = data[:i+1]
	}
	keep, torn = int64(len(complete)), int64(len(data)-len(complete))
	lines := bytes.Split(bytes.TrimSuffix(complete, []byte{'\n'}), []byte{'\n'})
	if len(complete) == 0 {
		return nil, "", nil, keep, torn, nil
	}
	for n, raw := range lines {
		var l journalLine
		// A header with a key named twice could say two sets of conditions at once.
		if err := untrusted.Unmarshal(raw, &l); err != nil {
			return nil, "", nil, 0, 0, &JournalCorruptError{Path: path, Line: n + 1}
		}
		if n == 0 {
			if l.Kind != "conditions" || l.Conditions == nil {
				return nil, "", nil, 0, 0, &JournalMismatchError{Path: path, Fields: []string{"the journal's header"}}
			}
			mismatch = l.Conditions.differ(cond)
			done = map[string]Turn{}
			continue
		}
		switch {
		case l.Kind == "host":
			version = l.Version
		case l.Kind == "digests":
			digests = l.Digests
		case l.Kind == "turn" && l.Turn != nil && len(usageProblems(2, []Turn{*l.Turn})) == 0:
			done[l.Turn.Key()] = *l.Turn
		default:
			return nil, "", nil, 0, 0, &JournalCorruptError{Path: path, Line: n + 1}
		}
	}
	if len(mismatch) > 0 {
		if len(done) == 0 && version == "" {
			// Nothing was paid for under the old conditions: start afresh.
			return nil, "", nil, 0, keep + torn, nil
		}
		return nil, "", nil, 0, 0, &JournalMismatchError{Path: path, Fields: mismatch}
	}
	return done, version, digests, keep, torn, nil
}

// readRegularLimited reads a regular file (never a symbolic link, a FIFO or a device) of at most
// limit bytes.
func readRegularLimited(path string, limit int64) ([]byte, error) {
	if st, err := os.Lstat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return untrusted.ReadFile(path, limit)
}
