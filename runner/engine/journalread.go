package engine

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/untrusted"
)

// A journal lives in the repository's git directory, which a repository can bring along, so
// every read of one is bounded: in bytes read, in the length of one line, and in what a reader
// keeps. What one holds is kept in memory only as far as a reader needs it.
const (
	// maxJournal bounds the bytes read of one journal. A journal past it is read to there, said
	// to be cut, and is not sealed (its seal, at the end, is not reached).
	maxJournal = 256 << 20
	// maxLine bounds one line: an agent's longest event is tens of kilobytes, a workflow's
	// run_end a few megabytes; a longer line is passed over.
	maxLine = 16 << 20
	// MaxEvents and maxEventMemory bound the events a reader keeps of one journal: a real run
	// writes hundreds of events, an agent's long run thousands, a few megabytes in all.
	// maxEventMemory bounds what they cost decoded, estimated by eventCost before a line is
	// decoded.
	MaxEvents      = 100_000
	maxEventMemory = 32 << 20
)

// eventCost estimates, from above, what one event line costs in memory at its peak while it is
// checked for keys named twice and decoded into maps and slices: its bytes, and for each object,
// array, member and element what encoding/json allocates beyond them. Measured on Go 1.26
// (amd64): an empty object costs 67 bytes, an object's first member about 290 (its map's first
// group), a further member about 55 and CheckKeys's record of its key about 85 more until the
// collector runs, an array 43, an element 16 to 32 while its slice grows. Brackets, colons and
// commas inside strings count too, which only overestimates.
func eventCost(line []byte) int {
	count := func(c byte) int { return bytes.Count(line, []byte{c}) }
	return len(line) + 320*count('{') + 64*count('[') + 128*count(':') + 48*count(',')
}

// journalSealVersion names what a journal's seal covers, so a seal of another layout never
// verifies.
const journalSealVersion = "locum journal seal 1"

// sealPrefix begins every seal line: encoding/json writes a map's keys sorted, and event sorts
// first of the seal's keys.
var sealPrefix = []byte(`{"event":"seal",`)

// sealMAC is the seal of the journal file named name, of run runID, whose bytes before the seal
// have the SHA-256 digest: an HMAC-SHA256 under the operator's key. The name binds the seal to
// its file, so a sealed journal copied under another name is not sealed there.
func sealMAC(key []byte, runID, name string, digest []byte) string {
	data, _ := json.Marshal([]string{journalSealVersion, runID, name, hex.EncodeToString(digest)})
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// sealLine is the seal event, with its newline.
func sealLine(now time.Time, runID, mac string) []byte {
	line, _ := json.Marshal(map[string]string{"event": "seal", "mac": mac, "run": runID, "ts": now.UTC().Format(time.RFC3339Nano)})
	return append(line, '\n')
}

// JournalKey is the operator's key for journals (the rollback key in the user state directory):
// with create it is made on first use, as for the first sealed write; without, a missing key is
// nil, and no journal is sealed under it.
func JournalKey(env packs.Lookup, create bool) ([]byte, error) {
	dirs, err := packs.FindUserDirs(env)
	if err != nil {
		return nil, err
	}
	return rails.LoadRollbackKey(dirs.State, create)
}

// Seal is what a journal's end shows of who wrote it.
type Seal struct {
	// Sealed says the journal ends in a seal that holds under the operator's key over every
	// byte before it, its file's name and Run: locum wrote it, and nothing changed it since.
	Sealed bool
	// Run is the run the seal names; "" where the journal is not sealed.
	Run string
}

// Unsealed says, for a person, what an unsealed journal is and what it does not count for.
const Unsealed = "locum cannot show it wrote this journal (no seal of yours holds over it: from before journals were sealed, changed since, copied, or a run that has not ended), so the ledger and the break-even do not count it"

// scanned is one pass over a journal.
type scanned struct {
	Seal
	// Cut says the file is over maxJournal and was read to there.
	Cut bool
	// digest is the SHA-256 of every byte read.
	digest hash.Hash
}

// StreamJournal reads the journal at path (a regular file) once, line by line: fn gets each
// line but seal lines and those over maxLine, without its newline, valid only during the call.
// The seal is checked under key (nil: none is, and the journal reads as unsealed). cut says the
// file is over maxJournal bytes and was read to there.
func StreamJournal(path string, key []byte, fn func(line []byte)) (seal Seal, cut bool, err error) {
	f, err := untrusted.Open(path)
	if err != nil {
		return Seal{}, false, err
	}
	defer f.Close()
	s, err := scan(f, filepath.Base(path), key, fn)
	return s.Seal, s.Cut, err
}

// scan reads r, the journal file named name, as StreamJournal says.
func scan(r io.Reader, name string, key []byte, fn func(line []byte)) (scanned, error) {
	return scanSize(r, name, key, fn, 64<<10)
}

// scanSize is scan through a buffer of size bytes. A line is hashed once it is whole, so a seal
// line is checked against the digest of the bytes before it whatever the buffer's size; a line
// over maxLine, which no seal is, is hashed as it comes and passed over.
func scanSize(r io.Reader, name string, key []byte, fn func(line []byte), size int) (scanned, error) {
	s := scanned{digest: sha256.New()}
	br := bufio.NewReaderSize(r, size)
	var (
		read    int64
		sealEnd int64  = -1
		long    []byte // the line so far, where it did not fit the buffer
		over    bool   // the line so far is over maxLine: hashed, not kept
	)
	if p, ok := longLines.Get().(*[]byte); ok {
		long = (*p)[:0]
	}
	defer func() {
		if cap(long) > 0 {
			longLines.Put(&long)
		}
	}()
	for {
		chunk, err := br.ReadSlice('\n')
		if read+int64(len(chunk)) > maxJournal {
			s.Cut = true
			break
		}
		read += int64(len(chunk))
		switch {
		case over:
			s.digest.Write(chunk)
		case len(long)+len(chunk) > maxLine:
			s.digest.Write(long)
			s.digest.Write(chunk)
			over, long = true, long[:0]
		case err == bufio.ErrBufferFull:
			long = grow(long, chunk)
		case len(chunk) > 0 || len(long) > 0:
			line := chunk
			if len(long) > 0 {
				long = grow(long, chunk)
				line = long
			}
			isSeal := bytes.HasPrefix(line, sealPrefix)
			if isSeal && key != nil {
				if run, ok := checkSeal(line, key, name, s.digest); ok {
					sealEnd, s.Run = read, run
				}
			}
			s.digest.Write(line)
			if !isSeal && fn != nil {
				fn(bytes.TrimSuffix(line, []byte{'\n'}))
			}
		}
		if err != bufio.ErrBufferFull {
			long, over = long[:0], false
		}
		if err == io.EOF {
			break
		}
		if err != nil && err != bufio.ErrBufferFull {
			return s, err
		}
	}
	s.Sealed = !s.Cut && sealEnd == read && read > 0
	if !s.Sealed {
		s.Run = ""
	}
	return s, nil
}

// longLines keeps the buffer a long line grew for the next journal read: a folder of journals
// of long lines then costs one buffer, rather than one a journal until the collector runs.
var longLines sync.Pool

// grow appends chunk to buf, a line no longer than maxLine, doubling buf's capacity up to
// maxLine when it must grow: a long line then costs at most twice its length in buffers over its
// whole read, where append's steps of a quarter cost five times.
func grow(buf, chunk []byte) []byte {
	if need := len(buf) + len(chunk); need > cap(buf) {
		bigger := make([]byte, len(buf), max(need, min(2*cap(buf), maxLine)))
		copy(bigger, buf)
		buf = bigger
	}
	return append(buf, chunk...)
}

// checkSeal says whether line is a seal that holds over the bytes digest has seen, and the run
// it names.
func checkSeal(line, key []byte, name string, digest hash.Hash) (string, bool) {
	var seal struct {
		Event string `json:"event"`
		MAC   string `json:"mac"`
		Run   string `json:"run"`
	}
	if untrusted.Unmarshal(line, &seal) != nil || seal.Event != "seal" || seal.Run == "" {
		return "", false
	}
	want := sealMAC(key, seal.Run, name, digest.Sum(nil))
	return seal.Run, hmac.Equal([]byte(seal.MAC), []byte(want))
}

// RunJournal is one journal read back: its events, as far as a reader keeps them, and whether
// locum can show it wrote it.
type RunJournal struct {
	Path   string
	Events []map[string]any
	Seal
	// Cut says why events of the journal are not in Events; "" where none were left out but
	// those the reader passed over.
	Cut string
}

// LoadJournal reads the journal at path under key (nil checks no seal). Only a line that names
// an event is decoded, and only where keep accepts it (nil keeps every event); a line that is
// not one JSON object, or names a key twice, is skipped. At most MaxEvents events, costing at
// most maxEventMemory decoded, are kept: Cut says so.
func LoadJournal(path string, key []byte, keep func(line []byte) bool) (RunJournal, error) {
	j := RunJournal{Path: path}
	var kept int
	full := false
	seal, cut, err := StreamJournal(path, key, func(line []byte) {
		if full || !bytes.Contains(line, []byte(`"event"`)) || (keep != nil && !keep(line)) {
			return
		}
		cost := eventCost(line)
		if len(j.Events) >= MaxEvents || kept+cost > maxEventMemory {
			full = true
			return
		}
		var ev map[string]any
		if untrusted.Unmarshal(line, &ev) == nil {
			j.Events = append(j.Events, ev)
			kept += cost
		}
	})
	j.Seal = seal
	switch {
	case cut:
		j.Cut = fmt.Sprintf("the journal is over %d MiB: read to there", maxJournal>>20)
	case full:
		j.Cut = fmt.Sprintf("the journal holds more events than a reader keeps (%d, or about %d MiB decoded): the first are shown", MaxEvents, maxEventMemory>>20)
	}
	return j, err
}

// FindRun is the journal in dir of the run with the given id (or a unique prefix of it).
func FindRun(dir, id string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	var match []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".jsonl")
		if strings.HasPrefix(name, id) && strings.HasSuffix(e.Name(), ".jsonl") {
			match = append(match, e.Name())
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("no run %q in %s; locum runs list shows the runs", id, dir)
	case 1:
		return filepath.Join(dir, match[0]), nil
	default:
		return "", fmt.Errorf("%q names %d runs; give more of the id", id, len(match))
	}
}

// LoadRun is LoadJournal of the run with the given id (or a unique prefix of it) in dir.
func LoadRun(dir, id string, key []byte) (RunJournal, error) {
	path, err := FindRun(dir, id)
	if err != nil {
		return RunJournal{}, err
	}
	return LoadJournal(path, key, nil)
}

// ReadRun returns the events of the run with the given id (or a unique prefix of it), bounded
// as LoadJournal says, with no seal checked.
func ReadRun(dir, id string) (string, []map[string]any, error) {
	j, err := LoadRun(dir, id, nil)
	return j.Path, j.Events, err
}

// ReadJournal returns the events of the journal at path, bounded as LoadJournal says, with no
// seal checked.
func ReadJournal(path string) ([]map[string]any, error) {
	j, err := LoadJournal(path, nil, nil)
	return j.Events, err
}

// RunSummary is one run, read back from its journal.
type RunSummary struct {
	ID      string
	Path    string
	Start   time.Time
	Mode    string
	Model   string
	Status  string
	Receipt string
	// Sealed says locum can show it wrote the journal (Seal).
	Sealed bool
}

// ListRuns reads the journals in dir, newest first, checking each one's seal under key.
func ListRuns(dir string, key []byte) ([]RunSummary, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunSummary
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		s, err := summarizeRun(filepath.Join(dir, e.Name()), key)
		if err != nil {
			continue
		}
		out = append(out, s)
	}
	// Newest first by the time each run says it started: two runs in one second have IDs that
	// differ only in a random suffix.
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Start.Equal(out[j].Start) {
			return out[i].Start.After(out[j].Start)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// summaryLine is what a run's summary reads of a run_start or run_end line, each field once;
// every other value of the line is passed over without being built.
type summaryLine struct {
	Event   untrusted.Once[string] `json:"event"`
	TS      untrusted.Once[string] `json:"ts"`
	Mode    untrusted.Once[string] `json:"mode"`
	Model   untrusted.Once[string] `json:"model"`
	Status  untrusted.Once[string] `json:"status"`
	Receipt untrusted.Once[string] `json:"receipt"`
}

// maxSummaryText bounds each text a summary keeps of its journal (a mode, a model, a status, a
// receipt: locum writes each in well under it), so that a list of many runs costs little per run
// whatever their journals hold.
const maxSummaryText = 1 << 10

// clip is s cut to maxSummaryText bytes on a character's boundary, in memory of its own (a long
// string's own memory is not kept).
func clip(s string) string {
	if len(s) <= maxSummaryText {
		return s
	}
	n := maxSummaryText
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// summarizeRun reads a journal's run_start and run_end alone: every other line is hashed for the
// seal and passed over undecoded. The first run_start and the last line that may be a run_end
// decide; each is read through summaryLine, which builds only the fields a summary shows, so a
// journal of any shape costs the line being read and no more.
func summarizeRun(path string, key []byte) (RunSummary, error) {
	s := RunSummary{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Status: "running?"}
	var (
		started bool
		lines   int
		end     summaryLine // of the last line that may be a run_end; zero where it is not one
	)
	seal, _, err := StreamJournal(path, key, func(line []byte) {
		lines++
		switch {
		case !started && bytes.Contains(line, []byte(`"run_start"`)):
			var ev summaryLine
			if untrusted.UnmarshalFields(line, &ev) == nil && ev.Event.V == "run_start" {
				started = true
				s.Start, _ = time.Parse(time.RFC3339Nano, ev.TS.V)
				s.Mode, s.Model = clip(ev.Mode.V), clip(ev.Model.V)
			}
		case bytes.Contains(line, []byte(`"run_end"`)):
			end = summaryLine{}
			if untrusted.UnmarshalFields(line, &end) != nil {
				end = summaryLine{}
			}
		}
	})
	if err != nil || lines == 0 {
		return RunSummary{}, errors.New("empty journal")
	}
	s.Sealed = seal.Sealed
	if end.Event.V == "run_end" {
		s.Status, s.Receipt = clip(end.Status.V), clip(end.Receipt.V)
		// The end says which model ran: none for a lexical dedup that started with an
		// embedding model configured.
		if end.Model.Set {
			s.Model = clip(end.Model.V)
		}
	}
	return s, nil
}
