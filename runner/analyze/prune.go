package analyze

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// PruneOptions says which journals go. A zero OlderThan or MaxBytes is no limit of that kind.
type PruneOptions struct {
	OlderThan time.Duration
	MaxBytes  int64
	Now       time.Time
	DryRun    bool
}

// Pruned is one journal removed (or, in a dry run, that would be).
type Pruned struct {
	ID     string `json:"run"`
	Bytes  int64  `json:"bytes"`
	Reason string `json:"reason"` // "age" or "size"
}

// PruneReport is what a prune did.
type PruneReport struct {
	Pruned []Pruned `json:"pruned"`
	// Kept is how many journals stay, and their bytes.
	Kept      int   `json:"kept"`
	KeptBytes int64 `json:"kept_bytes"`
	// Skipped names files in the folder that do not look like a locum journal: left alone.
	Skipped []string `json:"skipped"`
}

type journalFile struct {
	name  string
	start time.Time
	size  int64
}

// Prune removes run journals in dir: those started longer than OlderThan ago, then the oldest
// until the rest fit MaxBytes. The newest journal is never removed for size: it may be a run in
// progress. Only regular *.jsonl files whose first line is a run_start event are touched; the
// folder lives under a git directory a repository can bring along, so anything else is left as it
// is.
func Prune(dir string, opts PruneOptions) (PruneReport, error) {
	rep := PruneReport{Pruned: []Pruned{}, Skipped: []string{}}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, err
	}
	var files []journalFile
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		if !e.Type().IsRegular() {
			rep.Skipped = append(rep.Skipped, e.Name())
			continue
		}
		start, ok := journalStart(filepath.Join(dir, e.Name()))
		info, err := e.Info()
		if !ok || err != nil {
			rep.Skipped = append(rep.Skipped, e.Name())
			continue
		}
		if start.IsZero() {
			start = info.ModTime()
		}
		files = append(files, journalFile{name: e.Name(), start: start, size: info.Size()})
	}
	sort.Slice(files, func(i, j int) bool {
		if !files[i].start.Equal(files[j].start) {
			return files[i].start.Before(files[j].start)
		}
		return files[i].name < files[j].name
	})
	var total int64
	for _, f := range files {
		total += f.size
	}
	remove := func(f journalFile, reason string) error {
		if !opts.DryRun {
			if err := os.Remove(filepath.Join(dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("removing the journal %s: %w", f.name, err)
			}
		}
		rep.Pruned = append(rep.Pruned, Pruned{ID: strings.TrimSuffix(f.name, ".jsonl"), Bytes: f.size, Reason: reason})
		total -= f.size
		return nil
	}
	rest := files[:0:0]
	for _, f := range files {
		if opts.OlderThan > 0 && f.start.Before(opts.Now.Add(-opts.OlderThan)) {
			if err := remove(f, "age"); err != nil {
				return rep, err
			}
			continue
		}
		rest = append(rest, f)
	}
	kept := rest
	if opts.MaxBytes > 0 {
		kept = nil
		for i, f := range rest {
			if total > opts.MaxBytes && i < len(rest)-1 {
				if err := remove(f, "size"); err != nil {
					return rep, err
				}
				continue
			}
			kept = append(kept, f)
		}
	}
	rep.Kept = len(kept)
	rep.KeptBytes = total
	return rep, nil
}

// maxFirstLine bounds the run_start line read to recognise a journal.
const maxFirstLine = 1 << 20

// journalStart reads a journal's first line: ok when it is a run_start event, with its time when
// the line gives one.
func journalStart(path string) (time.Time, bool) {
	f, err := untrusted.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), maxFirstLine)
	if !sc.Scan() {
		return time.Time{}, false
	}
	var first struct {
		Event untrusted.Once[string] `json:"event"`
		TS    untrusted.Once[string] `json:"ts"`
	}
	if untrusted.UnmarshalFields(sc.Bytes(), &first) != nil || first.Event.V != "run_start" {
		return time.Time{}, false
	}
	ts, _ := time.Parse(time.RFC3339Nano, first.TS.V)
	return ts, true
}
