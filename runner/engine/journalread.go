package engine

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// A journal lives in the repository's git directory, which a repository can bring along, so
// every read of one is bounded: in bytes read, in the length of one line, and in what a reader
// keeps. What one holds is kept in memory only as far as a reader needs it.
const (
	// maxJournal bounds the bytes read of one journal. A journal past it is read to there, and
	// said to be cut.
	maxJournal = 256 << 20
	// maxLine bounds one line: an agent's longest event is tens of kilobytes, a workflow's
	// run_end a few megabytes; a longer line is passed over.
	maxLine = 16 << 20
	// MaxEvents and maxEventMemory bound the events a reader keeps of one journal: a real run
	// writes hundreds of events, an agent's long run thousands. maxEventMemory bounds what they
	// cost decoded, estimated by eventCost.
	MaxEvents      = 100_000
	maxEventMemory = 64 << 20
)

// eventCost estimates what one event line costs in memory once decoded: its bytes, and for each
// member of an object (a colon) or an array (a comma) what a map entry or an interface value
// costs beyond them. Colons and commas inside strings count too, which only overestimates.
func eventCost(line []byte) int {
	return len(line) + 256*bytes.Count(line, []byte{':'}) + 32*bytes.Count(line, []byte{','})
}

// StreamJournal reads the journal at path (a regular file) once, line by line: fn gets each
// line but those over maxLine, without its newline, valid only during the call. cut says the
// file is over maxJournal bytes and was read to there.
func StreamJournal(path string, fn func(line []byte)) (cut bool, err error) {
	f, err := untrusted.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return scan(f, fn)
}

// scan reads r as StreamJournal says.
func scan(r io.Reader, fn func(line []byte)) (bool, error) {
	return scanSize(r, fn, 64<<10)
}

// scanSize is scan through a buffer of size bytes: a line over maxLine is passed over as it
// comes, never held whole.
func scanSize(r io.Reader, fn func(line []byte), size int) (bool, error) {
	br := bufio.NewReaderSize(r, size)
	var (
		read int64
		long []byte // the line so far, where it did not fit the buffer
		over bool   // the line so far is over maxLine: not kept
	)
	for {
		chunk, err := br.ReadSlice('\n')
		if read+int64(len(chunk)) > maxJournal {
			return true, nil
		}
		read += int64(len(chunk))
		switch {
		case over:
		case len(long)+len(chunk) > maxLine:
			over, long = true, long[:0]
		case err == bufio.ErrBufferFull:
			long = append(long, chunk...)
		case len(chunk) > 0 || len(long) > 0:
			line := chunk
			if len(long) > 0 {
				long = append(long, chunk...)
				line = long
			}
			if fn != nil {
				fn(bytes.TrimSuffix(line, []byte{'\n'}))
			}
		}
		if err != bufio.ErrBufferFull {
			long, over = long[:0], false
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil && err != bufio.ErrBufferFull {
			return false, err
		}
	}
}

// RunJournal is one journal read back: its events, as far as a reader keeps them.
type RunJournal struct {
	Path   string
	Events []map[string]any
	// Cut says why events of the journal are not in Events; "" where none were left out but
	// those the reader passed over.
	Cut string
}

// LoadJournal reads the journal at path. Only a line that names an event is decoded, and only
// where keep accepts it (nil keeps every event); a line that is not one JSON object, or names a
// key twice, is skipped. At most MaxEvents events, costing at most maxEventMemory decoded, are
// kept: Cut says so.
func LoadJournal(path string, keep func(line []byte) bool) (RunJournal, error) {
	j := RunJournal{Path: path}
	var kept int
	full := false
	cut, err := StreamJournal(path, func(line []byte) {
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
func LoadRun(dir, id string) (RunJournal, error) {
	path, err := FindRun(dir, id)
	if err != nil {
		return RunJournal{}, err
	}
	return LoadJournal(path, nil)
}

// ReadRun returns the events of the run with the given id (or a unique prefix of it), bounded
// as LoadJournal says.
func ReadRun(dir, id string) (string, []map[string]any, error) {
	j, err := LoadRun(dir, id)
	return j.Path, j.Events, err
}

// ReadJournal returns the events of the journal at path, bounded as LoadJournal says.
func ReadJournal(path string) ([]map[string]any, error) {
	j, err := LoadJournal(path, nil)
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
}

// ListRuns reads the journals in dir, newest first.
func ListRuns(dir string) ([]RunSummary, error) {
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
		s, err := summarizeRun(filepath.Join(dir, e.Name()))
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

// summarizeRun reads a journal's run_start and run_end alone: every other line is passed over
// undecoded, and of the lines that may be a run_end only the last is kept (in one buffer) and
// decoded, so a journal of any shape costs a bounded few allocations.
func summarizeRun(path string) (RunSummary, error) {
	s := RunSummary{Path: path, ID: strings.TrimSuffix(filepath.Base(path), ".jsonl"), Status: "running?"}
	var (
		started bool
		lines   int
		end     []byte
	)
	_, err := StreamJournal(path, func(line []byte) {
		lines++
		switch {
		case !started && bytes.Contains(line, []byte(`"run_start"`)):
			var ev map[string]any
			if untrusted.Unmarshal(line, &ev) == nil && ev["event"] == "run_start" {
				started = true
				s.Start, _ = time.Parse(time.RFC3339Nano, str(ev["ts"]))
				s.Mode, s.Model = str(ev["mode"]), str(ev["model"])
			}
		case bytes.Contains(line, []byte(`"run_end"`)):
			end = append(end[:0], line...)
		}
	})
	if err != nil || lines == 0 {
		return RunSummary{}, errors.New("empty journal")
	}
	var ev map[string]any
	if end != nil && untrusted.Unmarshal(end, &ev) == nil && ev["event"] == "run_end" {
		s.Status, s.Receipt = str(ev["status"]), str(ev["receipt"])
		// The end says which model ran: none for a lexical dedup that started with an
		// embedding model configured.
		if m, ok := ev["model"]; ok {
			s.Model = str(m)
		}
	}
	return s, nil
}
