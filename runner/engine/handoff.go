package engine

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// A red run hands the host, which now has the job to do itself, what the run learnt: the attempt
// that came closest as a diff (by a rule the handoff names), what the verify said of it, the
// failure's kind and what to do next, so the host starts from the model's work rather than from
// nothing. It is bounded in bytes, since the host pays to read every one, and says what was cut.

// MaxHandoffBytes bounds a handoff as a result carries it, its JSON encoding whole: a workflow's,
// with every red item's inside it, as one transform's.
const MaxHandoffBytes = 4096

// Handoff is a red run's handoff (Result.Handoff). Every key is written, null where unused.
type Handoff struct {
	// Failure is the result's error kind (red, checks, unchanged, repeated, max_turns...).
	Failure string `json:"failure"`
	// Rule names how the attempt shown was chosen.
	Rule string `json:"rule"`
	// Attempt is the attempt shown, where the mode counts attempts (a transform's).
	Attempt *int `json:"attempt"`
	// Diff is that attempt as a unified diff against the files as they were; null where no
	// attempt reached a file, and NoDiff says why.
	Diff   *string `json:"diff"`
	NoDiff *string `json:"no_diff"`
	// Verified says VerifyTail is the verify's output on exactly the tree Diff makes.
	Verified   bool    `json:"verified"`
	VerifyTail *string `json:"verify_tail"`
	// Next is what the host should do next, one line.
	Next string `json:"next"`
	// Items are a workflow's red items, each with its own run's handoff; null for other modes.
	Items []ItemHandoff `json:"items"`
	// Cut says what was shortened to keep the handoff within MaxHandoffBytes: empty where
	// nothing was.
	Cut []string `json:"cut"`
	// Bytes is the handoff's own size as the result's JSON carries it.
	Bytes int `json:"bytes"`

	// fullDiff and fullTail are Diff and VerifyTail before any cut, for a bound that recuts.
	fullDiff, fullTail string
	// files are what the handoff's use is measured on (HandoffFile).
	files []HandoffFile
}

// Files are what the handoff's use is measured on: each file its diff changes.
func (h *Handoff) Files() []HandoffFile {
	if h == nil {
		return nil
	}
	return h.files
}

// ItemHandoff is one red item of a workflow and its run's handoff.
type ItemHandoff struct {
	Step    string   `json:"step"`
	Index   int      `json:"index"`
	Item    string   `json:"item"`
	Run     string   `json:"run_id"`
	Handoff *Handoff `json:"handoff"`
}

// HandoffDraft is what a mode knows of its red run's handoff (Run.SetHandoff): the engine adds
// the failure's kind, bounds it and journals it.
type HandoffDraft struct {
	Rule    string
	Attempt *int
	// Diff is the attempt as a unified diff, "" where none reached a file; NoDiff then says why.
	Diff       string
	NoDiff     string
	Verified   bool
	VerifyTail *string
	Next       string
	Items      []ItemHandoff
	// Files are each file Diff changes, as HandoffFileOf makes them.
	Files []HandoffFile
}

// HandoffFunc makes a red run's handoff once its steps ended, before its guards run (an agent's
// worktree is still there): failure is the kind the result will carry. Nil: no handoff.
type HandoffFunc func(ctx context.Context, failure string) *HandoffDraft

// SetHandoff gives the run what makes its handoff should it end red.
func (r *Run) SetHandoff(fn HandoffFunc) { r.handoff = fn }

// makeHandoff is the handoff of a run ending in err, nil where it does not end red or its mode
// makes none.
func (r *Run) makeHandoff(ctx context.Context, err error) *Handoff {
	status, kind, _ := Classify(err)
	if status != StatusRed || r.handoff == nil {
		return nil
	}
	d := r.handoff(ctx, kind)
	if d == nil {
		return nil
	}
	return NewHandoff(kind, *d)
}

// NewHandoff is the handoff d drafts, for a run that failed as kind, bounded by MaxHandoffBytes.
func NewHandoff(kind string, d HandoffDraft) *Handoff {
	h := &Handoff{Failure: kind, Rule: d.Rule, Attempt: d.Attempt, Verified: d.Verified, Next: d.Next,
		Items: d.Items, fullDiff: d.Diff, files: d.Files}
	if d.Diff == "" && d.NoDiff != "" {
		h.NoDiff = new(d.NoDiff)
	}
	if d.VerifyTail != nil {
		h.fullTail = *d.VerifyTail
		h.VerifyTail = new(*d.VerifyTail)
	}
	h.bound(MaxHandoffBytes)
	return h
}

// handoffSize is h's JSON's length, as the result's encoding writes it.
func handoffSize(h *Handoff) int {
	data, err := json.Marshal(h)
	if err != nil {
		return 0
	}
	return len(data)
}

// tailFloor is the verify output a handoff keeps before it cuts its diff further: the end of a
// test's failure, a few lines.
const tailFloor = 600

// minItemBytes is the least room a workflow item's handoff is given; past as many items as that
// leaves room for, the rest are left to the result's details.
const minItemBytes = 480

// bound cuts h to at most max bytes: the verify's tail from its start (its end says what failed),
// then the diff from its end (its first hunks are the attempt's start), each at whole lines; a
// workflow's items share the room, each cut the same way. Bytes is then its size.
func (h *Handoff) bound(limit int) {
	h.Cut = []string{}
	if len(h.Items) > 0 {
		h.boundItems(limit)
	} else {
		h.boundText(limit)
	}
	h.setBytes()
}

// setBytes sets Bytes to h's size, the figure included.
func (h *Handoff) setBytes() {
	h.Bytes = 0
	for range 4 {
		n := handoffSize(h)
		if n == h.Bytes {
			return
		}
		h.Bytes = n
	}
}

// boundText cuts a handoff's own diff and tail to fit limit.
func (h *Handoff) boundText(limit int) {
	diffRoom, tailRoom := len(h.fullDiff), len(h.fullTail)
	for {
		h.setText(diffRoom, tailRoom)
		// The size, with room for the figure Bytes takes.
		over := handoffSize(h) + 8 - limit
		switch {
		case over <= 0:
			return
		case tailRoom > tailFloor && tailRoom*2 >= diffRoom:
			tailRoom = max(tailFloor, tailRoom-rawBytes(over, deref(h.VerifyTail)))
		case diffRoom > 0:
			diffRoom = max(0, diffRoom-rawBytes(over, deref(h.Diff)))
		case tailRoom > 0:
			tailRoom = max(0, tailRoom-rawBytes(over, deref(h.VerifyTail)))
		default:
			return // nothing left to cut: locum's own words fill it
		}
	}
}

// rawBytes is how many bytes of text make over bytes of its JSON (a tab or a < takes more there),
// at least one.
func rawBytes(over int, text string) int {
	encoded, err := json.Marshal(text)
	if err != nil || len(encoded) <= 2 {
		return max(over, 1)
	}
	return max(1, over*len(text)/(len(encoded)-2))
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// setText sets Diff and VerifyTail to their full texts cut to the rooms given, and Cut to what
// was cut.
func (h *Handoff) setText(diffRoom, tailRoom int) {
	h.Cut = h.Cut[:0]
	if h.fullDiff != "" {
		diff, cut := cutHead(h.fullDiff, diffRoom)
		h.Diff = &diff
		if cut != "" {
			h.Cut = append(h.Cut, "diff: "+cut)
		}
	}
	if h.VerifyTail != nil {
		tail, cut := cutTail(h.fullTail, tailRoom)
		h.VerifyTail = &tail
		if cut != "" {
			h.Cut = append(h.Cut, "verify_tail: "+cut)
		}
	}
}

// boundItems shares limit among a workflow's items, each item's handoff cut to its share; where a
// share would be under minItemBytes, the items past those that fit are left out.
func (h *Handoff) boundItems(limit int) {
	all := h.Items
	for _, it := range all {
		if it.Handoff != nil {
			it.Handoff.bound(MaxHandoffBytes)
		}
	}
	if handoffSize(h)+8 <= limit {
		return
	}
	h.Items = nil
	room := limit - handoffSize(h) - 96 // the cut's words
	h.Items = all
	n := len(all)
	if room/n < minItemBytes {
		n = max(1, room/minItemBytes)
		h.Items = all[:n]
		h.Cut = []string{fmt.Sprintf("items: %d of %d red items shown; details.items has every item's run_id", n, len(all))}
	}
	share := room / n
	for range 8 {
		for _, it := range h.Items {
			if it.Handoff != nil {
				it.Handoff.bound(share)
			}
		}
		over := handoffSize(h) + 8 - limit
		if over <= 0 {
			return
		}
		share -= max(1, over/len(h.Items)+1)
	}
	// Whatever the shares came to, the bound holds: the last items go until it does.
	for len(h.Items) > 0 && handoffSize(h)+8 > limit {
		h.Items = h.Items[:len(h.Items)-1]
		h.Cut = []string{fmt.Sprintf("items: %d of %d red items shown; details.items has every item's run_id", len(h.Items), len(all))}
	}
}

// cutHead keeps the whole lines of s from its start that fit in room, and says what it cut.
func cutHead(s string, room int) (string, string) {
	if len(s) <= room {
		return s, ""
	}
	lines := strings.SplitAfter(s, "\n")
	kept, n := 0, 0
	for _, l := range lines {
		if n+len(l) > room {
			break
		}
		n += len(l)
		kept++
	}
	total := len(lines)
	if lines[total-1] == "" {
		total--
	}
	cut := fmt.Sprintf("%d of %d lines shown", kept, total)
	return s[:n] + fmt.Sprintf("[%d more lines cut]\n", total-kept), cut
}

// cutTail keeps the whole lines of s from its end that fit in room (where none does, the end of
// the last), and says what it cut.
func cutTail(s string, room int) (string, string) {
	if len(s) <= room {
		return s, ""
	}
	body := strings.TrimSuffix(s, "\n")
	lines := strings.SplitAfter(body, "\n")
	kept, n := 0, 0
	for i := len(lines) - 1; i >= 0; i-- {
		if n+len(lines[i]) > room {
			break
		}
		n += len(lines[i])
		kept++
	}
	if kept == 0 {
		start := max(len(body)-room, 0)
		for start < len(body) && !utf8.RuneStart(body[start]) {
			start++
		}
		end := body[start:]
		return "[cut]" + end, fmt.Sprintf("the last %d bytes shown", len(end))
	}
	cut := fmt.Sprintf("the last %d of %d lines shown", kept, len(lines))
	return fmt.Sprintf("[%d lines cut]\n", len(lines)-kept) + body[len(body)-n:], cut
}

// UnifiedDiff is the change from before to after of the file name (relative to the repository's
// root, slash-separated) as a unified diff with three lines of context, "" where there is none.
func UnifiedDiff(name, before, after string) string {
	if before == after {
		return ""
	}
	name = filepath.ToSlash(name)
	return udiff.Unified("a/"+name, "b/"+name, before, after)
}

// HandoffFile is what a handoff's use is measured on for one file: the file as the run left it
// (its SHA-256, "" where it did not exist), and the lines the attempt adds that it does not hold,
// each as a short hash of the line without its indentation. A host that used the handoff has
// those lines in the file afterwards; one that did not, has few of them.
type HandoffFile struct {
	File   string   `json:"file"`
	SHA256 string   `json:"sha256"`
	Added  []string `json:"added"`
}

// MaxAddedLines bounds the lines a handoff's use is measured by in one file, and
// MaxHandoffFiles the files.
const (
	MaxAddedLines   = 64
	MaxHandoffFiles = 32
)

// HandoffFileOf is the measure of a handoff's use on file name: before is the file as the run
// left it (nil where it does not exist), after the file as the attempt made it.
func HandoffFileOf(name string, before, after []byte) HandoffFile {
	f := HandoffFile{File: filepath.ToSlash(name), Added: []string{}}
	if before != nil {
		f.SHA256 = fileSHA(before)
	}
	had := lineKeys(before)
	seen := map[string]bool{}
	for _, l := range strings.Split(string(after), "\n") {
		k, ok := lineKey(l)
		if !ok || had[k] || seen[k] {
			continue
		}
		seen[k] = true
		f.Added = append(f.Added, k)
		if len(f.Added) == MaxAddedLines {
			break
		}
	}
	return f
}

func fileSHA(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// lineKey is a line's hash as a handoff's measure keeps it: 16 hex digits of the SHA-256 of the
// line without the spaces around it; false for a blank line, which says nothing of use.
func lineKey(line string) (string, bool) {
	t := strings.TrimSpace(line)
	if t == "" {
		return "", false
	}
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:8]), true
}

// lineKeys are the keys of text's lines.
func lineKeys(text []byte) map[string]bool {
	keys := map[string]bool{}
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		if k, ok := lineKey(string(line)); ok {
			keys[k] = true
		}
	}
	return keys
}
