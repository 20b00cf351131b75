package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// Whether a host used a handoff is measured, not assumed: after a red run, the lines its attempt
// adds that the file did not hold (HandoffFile) are looked for in the file. The host's next edit
// of the span either carries them or it does not. A later run of any mode that reads the file
// records the measure in the red run's journal before it changes anything (Run.MeasureHandoffs);
// the ledger and runs analyze measure a handoff nothing recorded yet on the file as it stands;
// and a person or the host may say (locum runs mark RUN --handoff used|unused), which outranks
// any measure.

// The words of a handoff's use.
const (
	HandoffUsed    = "used"
	HandoffUnused  = "unused"
	HandoffUnknown = "unknown"
)

// The sources of a handoff's use: a mark a person or host gave; a measure a later run recorded as
// it read the file; a measure made now, on the file as it stands, recorded nowhere.
const (
	UseMarked      = "mark"
	UseMeasured    = "measured"
	UseMeasuredNow = "measured_now"
)

// HandoffUseRule says how a handoff's use is measured, for the ledger's method and the docs.
const HandoffUseRule = "used where at least half the lines the attempt adds that its file did not hold are in the file afterwards; unused where fewer are and the file changed since the run; unknown where the file is as the run left it, cannot be read, or the attempt adds no line new to it; a mark (locum runs mark RUN --handoff used|unused) outranks the measure"

// HandoffUse is what became of a handoff, and how that is known.
type HandoffUse struct {
	Use     string `json:"use"`
	Source  string `json:"source,omitempty"`
	Present int    `json:"present"`
	Of      int    `json:"of"`
	Why     string `json:"why,omitempty"`
}

// HandoffRecord is a red run's handoff as its journal holds it, with what was said of its use.
type HandoffRecord struct {
	Bytes   int64
	Failure string
	Files   []HandoffFile
	// mark is the last mark; measured the first measure a later run recorded.
	mark, measured *HandoffUseEvent
}

// AddUse takes one handoff_use event of the journal in order: the last mark stands, and the
// first measure.
func (h *HandoffRecord) AddUse(e HandoffUseEvent) {
	if e.Use != HandoffUsed && e.Use != HandoffUnused {
		return
	}
	switch e.Source {
	case UseMarked:
		h.mark = &e
	case UseMeasured:
		if h.measured == nil {
			h.measured = &e
		}
	}
}

// Recorded says the journal holds a word on the handoff's use, a mark or a measure.
func (h *HandoffRecord) Recorded() bool { return h.mark != nil || h.measured != nil }

// Use is what became of the handoff: its mark, else the measure a later run recorded, else the
// measure of its files in root as they stand ("" root: unknown).
func (h *HandoffRecord) Use(root string) HandoffUse {
	for _, e := range []*HandoffUseEvent{h.mark, h.measured} {
		if e == nil {
			continue
		}
		u := HandoffUse{Use: e.Use, Source: e.Source, Why: e.Why}
		if e.Present != nil && e.Of != nil && *e.Present >= 0 && *e.Present <= *e.Of {
			u.Present, u.Of = *e.Present, *e.Of
		}
		return u
	}
	if root == "" {
		return HandoffUse{Use: HandoffUnknown, Why: "not measured"}
	}
	u := MeasureHandoff(root, h.Files)
	u.Source = UseMeasuredNow
	return u
}

// maxMeasuredFile bounds a file a handoff's use is measured on.
const maxMeasuredFile = 1 << 20

// MeasureHandoff measures a handoff's use on its files in root as they stand (HandoffUseRule).
// Each file is read confined to root, under a ceiling; a path that is not a relative one inside
// it leaves the use unknown.
func MeasureHandoff(root string, files []HandoffFile) HandoffUse {
	u := HandoffUse{Use: HandoffUnknown}
	changed := false
	for _, f := range files {
		rel := filepath.FromSlash(f.File)
		if !filepath.IsLocal(rel) {
			u.Why = "a file outside the repository"
			return u
		}
		data, err := untrusted.ReadFileIn(root, rel, maxMeasuredFile)
		sha := ""
		switch {
		case errors.Is(err, fs.ErrNotExist):
			data = nil
		case err != nil:
			u.Why = fmt.Sprintf("%s cannot be read: %v", f.File, err)
			return u
		default:
			sha = fileSHA(data)
		}
		if sha != f.SHA256 {
			changed = true
		}
		have := lineKeys(data)
		for _, k := range f.Added {
			u.Of++
			if have[k] {
				u.Present++
			}
		}
	}
	switch {
	case u.Of == 0:
		u.Why = "the attempt adds no line new to its file"
	case 2*u.Present >= u.Of:
		u.Use = HandoffUsed
	case changed:
		u.Use = HandoffUnused
	default:
		u.Why = "the file is as the run left it"
	}
	return u
}

// handoffScan is how many of the newest journals a run looks through for a handoff on the file it
// reads.
const handoffScan = 32

// MeasureHandoffs records, in the journal of each recent red run whose handoff changed file (as
// the run names it, relative to its root) and says nothing of its use yet, the handoff's use
// measured on the repository as this run finds it, before this run changes anything. Only where
// the measure decides: the handoff used, or not used by an edit since; and, where this run edits
// the file, not used where none was made, since the next edit is then this run's. A run that is
// a workflow's item (it reads a worktree) or has no key measures nothing; what cannot be read or
// written is passed over, since the measure must never stop the run.
func (r *Run) MeasureHandoffs(file string, edits bool) {
	if r.Spec.Parent != nil || r.Spec.JournalKey == nil || !filepath.IsLocal(filepath.FromSlash(file)) {
		return
	}
	key, err := r.Spec.JournalKey()
	if err != nil || len(key) == 0 {
		return
	}
	dir, err := RunsDir(r.Spec.Root)
	if err != nil {
		return
	}
	own := ""
	if r.Journal != nil {
		own = filepath.Base(r.Journal.Path())
	}
	for _, name := range newestJournals(dir, handoffScan, own) {
		path := filepath.Join(dir, name)
		id, rec, ok := readHandoff(path, key)
		if !ok || rec.Recorded() || !slices.ContainsFunc(rec.Files, func(f HandoffFile) bool { return f.File == filepath.ToSlash(file) }) {
			continue
		}
		u := MeasureHandoff(r.Spec.Root, rec.Files)
		switch {
		case u.Use != HandoffUnknown:
		case edits && u.Of > 0 && u.Why == "the file is as the run left it":
			u.Use, u.Why = HandoffUnused, "the next run on the file found it as the red run left it"
		default:
			continue
		}
		_ = AppendEvent(path, id, HandoffUseEvent{Use: u.Use, Source: UseMeasured, Present: new(u.Present), Of: new(u.Of), By: r.ID, Why: u.Why}, key)
	}
}

// newestJournals are the names of the n newest journals in dir (by name: a run's id starts with
// its start time), but skip.
func newestJournals(dir string, n int, skip string) []string {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, de := range des {
		if strings.HasSuffix(de.Name(), ".jsonl") && de.Type().IsRegular() && de.Name() != skip {
			names = append(names, de.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	return names[:min(n, len(names))]
}

var (
	handoffEventMark = []byte(`"event":"handoff`)
	runStartMark     = []byte(`"event":"run_start"`)
)

// handoffLine is what readHandoff reads of a line.
type handoffLine struct {
	Event   string          `json:"event"`
	Parent  *ParentRun      `json:"parent"`
	Files   []HandoffFile   `json:"files"`
	Summary *handoffSummary `json:"handoff"`
	HandoffUseEvent
}

// handoffSummary is what readHandoff reads of a handoff.
type handoffSummary struct {
	Bytes   int64  `json:"bytes"`
	Failure string `json:"failure"`
}

// readHandoff reads the handoff of the journal at path, sealed under key, of a run of its own
// (not a workflow's item): false where it has none.
func readHandoff(path string, key []byte) (string, HandoffRecord, bool) {
	var rec HandoffRecord
	parent, found := false, false
	seal, cut, err := StreamJournal(path, key, func(line []byte) {
		if !bytes.Contains(line, handoffEventMark) && !bytes.Contains(line, runStartMark) {
			return
		}
		var l handoffLine
		if untrusted.Unmarshal(line, &l) != nil {
			return
		}
		switch l.Event {
		case "run_start":
			parent = l.Parent != nil
		case "handoff":
			found = true
			rec.Files = BoundHandoffFiles(l.Files)
			if l.Summary != nil {
				rec.Bytes, rec.Failure = l.Summary.Bytes, l.Summary.Failure
			}
		case "handoff_use":
			rec.AddUse(l.HandoffUseEvent)
		}
	})
	if err != nil || cut || !seal.Sealed || parent || !found {
		return "", HandoffRecord{}, false
	}
	return seal.Run, rec, true
}

// BoundHandoffFiles is files as a reader keeps them: at most MaxHandoffFiles, each with at most
// MaxAddedLines lines.
func BoundHandoffFiles(files []HandoffFile) []HandoffFile {
	files = files[:min(len(files), MaxHandoffFiles)]
	out := make([]HandoffFile, len(files))
	for i, f := range files {
		f.Added = f.Added[:min(len(f.Added), MaxAddedLines)]
		out[i] = f
	}
	return out
}

// NoHandoffError is a mark asked of a run whose journal holds no handoff locum can count.
type NoHandoffError struct{ Run string }

func (e *NoHandoffError) Error() string {
	return fmt.Sprintf("run %s has no handoff the ledger counts: it did not end red with one, it is a workflow's item (mark its workflow's run), or locum cannot show it wrote its journal", untrusted.Escape(e.Run))
}

// MarkHandoff appends to the journal of run id (or a unique prefix of it) in dir a person's or the
// host's word on its handoff's use, used or unused, sealed under key: it outranks any measure. It
// returns the run's id.
func MarkHandoff(dir, id, use string, key []byte) (string, error) {
	if use != HandoffUsed && use != HandoffUnused {
		return "", fmt.Errorf("a handoff is marked %s or %s, not %q", HandoffUsed, HandoffUnused, use)
	}
	path, err := FindRun(dir, id)
	if err != nil {
		return "", err
	}
	run, _, ok := readHandoff(path, key)
	if !ok || len(key) == 0 {
		return "", &NoHandoffError{Run: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
	}
	return run, AppendEvent(path, run, HandoffUseEvent{Use: use, Source: UseMarked}, key)
}
