// Package mutate makes small changes to a span of a file that a verify worth the name should
// reject: the mutants a caller runs the verify against to learn whether it can see the span at
// all. It only makes them; it runs nothing and imports nothing of locum's.
//
// A Go file is mutated from its syntax tree (zero_return, negate_condition, swap_operator,
// delete_statement), each change printed into the original bytes so the rest of the file keeps
// them exactly. Any other file, and a .go file that does not parse, gets line-level mutants
// (delete_line, change_literal) with the same kind names whatever the file. Comments are never
// mutated: they are not behaviour.
//
// A Go mutant of a file that compiles is meant to compile, so that a verify rejecting it
// rejects a behaviour and not a build error: the file is type-checked alone, with no import
// resolved, and a site is left out when its change would leave a local variable or an import
// unused, divide by a constant zero, overflow a constant, subtract strings or make a function
// end without its return. What the file alone does not show can still break the build: an
// operand or constant declared in another file of the package, a dot import's last use. A
// negated condition or a swapped operator may make a loop run forever; a loop's post statement
// is never changed, but the caller bounds each verify run by time all the same.
package mutate

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math/bits"
	"path/filepath"
	"sort"
	"strings"
)

// The kinds of mutant, in the order a round-robin takes them.
const (
	ZeroReturn      = "zero_return"
	NegateCondition = "negate_condition"
	SwapOperator    = "swap_operator"
	DeleteStatement = "delete_statement"
	DeleteLine      = "delete_line"
	ChangeLiteral   = "change_literal"
)

// MaxFileBytes is the largest file Span mutates.
const MaxFileBytes = 1 << 20

// maxSites bounds the candidate changes collected from one span, so a huge span costs no more
// than a few thousand small records whatever max is.
const maxSites = 4096

// goKinds and lineKinds are the round-robin orders.
var (
	goKinds   = []string{ZeroReturn, NegateCondition, SwapOperator, DeleteStatement}
	lineKinds = []string{DeleteLine, ChangeLiteral}
)

// kindDocs is the one description of each kind, quoted by Describe for help text (`locum verify-check --help`).
var kindDocs = map[string]string{
	ZeroReturn:      "Go: a function or method body in the span replaced by a return of zero values (`return *new(T)` for each result; an empty body when there are none).",
	NegateCondition: "Go: an if or for condition c in the span becomes !(c) (a condition that is already !c becomes c).",
	SwapOperator:    "Go: one operator in the span swapped: < and >=, <= and >, == and !=, + and -, * and /, && and ||, += and -=, *= and /=, ++ and --.",
	DeleteStatement: "Go: one statement in the span deleted where the file still compiles without it: a call or other expression statement, an assignment with = or op=, an increment or decrement; never a return, a declaration, a := or a panic.",
	DeleteLine:      "Other files: one line of the span deleted, neither blank, a comment, nor punctuation alone.",
	ChangeLiteral:   "Other files: one literal in the span changed: a number n to n+1, a quoted string's content emptied (or an empty one given an x), true and false swapped.",
}

// Kinds is every kind, Go's first, in the order Describe lists them.
func Kinds() []string {
	return append(append([]string(nil), goKinds...), lineKinds...)
}

// Describe is one line per kind, "kind: sentence", for the kinds named (every kind when none
// is); an unknown kind is left out.
func Describe(kinds []string) string {
	if len(kinds) == 0 {
		kinds = Kinds()
	}
	var b strings.Builder
	for _, k := range kinds {
		doc, ok := kindDocs[k]
		if !ok {
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", k, doc)
	}
	return b.String()
}

// Mutant is one change to a span.
type Mutant struct {
	Kind string // one of the Kind constants
	Line int    // 1-based line of the file where the change is
	Desc string // one short line for a person; nothing escaped, the caller escapes
	Text []byte // the whole file with this one change made
}

// TooLargeError is a file over MaxFileBytes: Span mutates nothing of it.
type TooLargeError struct {
	Name  string
	Size  int
	Limit int
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is %d bytes, over the %d bytes mutants are made of", e.Name, e.Size, e.Limit)
}

// SpanError is a span that names no line of the file: start before line 1, end before start,
// or start after the file's last line. An end after the last line is taken as the last line.
type SpanError struct {
	Name       string
	Start, End int
	Lines      int // the file's lines
}

func (e *SpanError) Error() string {
	return fmt.Sprintf("%s: lines %d-%d are not a span of its %d lines", e.Name, e.Start, e.End, e.Lines)
}

// site is one candidate change: the bytes [lo, hi) of the file replaced by repl.
type site struct {
	kind   string
	line   int
	lo, hi int
	repl   []byte
	desc   string
}

// Span makes at most max mutants of the lines start..end (1-based, inclusive) of file, each
// changing bytes inside those lines only. The language is name's extension: .go is mutated
// from its syntax tree unless it does not parse, anything else line by line. The choice is
// deterministic and spread: kinds taken in turn, and within a kind the span's lines taken
// far apart first. No mutant's Text equals file or another's. A span of only comments and
// blank lines has no mutants and no error.
func Span(name string, file []byte, start, end, max int) ([]Mutant, error) {
	if len(file) > MaxFileBytes {
		return nil, &TooLargeError{Name: name, Size: len(file), Limit: MaxFileBytes}
	}
	idx := newLineIndex(file)
	if start < 1 || end < start || start > idx.count() {
		return nil, &SpanError{Name: name, Start: start, End: end, Lines: idx.count()}
	}
	end = min(end, idx.count())
	if max <= 0 {
		return nil, nil
	}
	lo, hi := idx.start(start), idx.end(end)
	var sites []site
	kinds, parsed := lineKinds, false
	if strings.EqualFold(filepath.Ext(name), ".go") {
		sites, parsed = goSites(file, idx, lo, hi)
		kinds = goKinds
	}
	if !parsed {
		sites, kinds = lineSites(name, file, idx, start, end), lineKinds
	}
	return choose(file, sites, kinds, max), nil
}

// choose takes up to max sites: a round over the kinds in order, each turn the kind's next
// site in spread order, until max are taken or every kind is spent.
func choose(file []byte, sites []site, kinds []string, max int) []Mutant {
	byKind := make(map[string][]site)
	for _, s := range sites {
		if s.lo < 0 || s.hi > len(file) || s.lo > s.hi {
			continue
		}
		byKind[s.kind] = append(byKind[s.kind], s)
	}
	queues := make([][]site, len(kinds))
	for i, k := range kinds {
		queues[i] = spread(byKind[k])
	}
	seen := map[[32]byte]bool{}
	var out []Mutant
	// A rejected site still costs a pass over the file: after this many, stop looking.
	rejects := 2*max + 64
	for len(out) < max && rejects > 0 {
		progress := false
		for i := range queues {
			for len(queues[i]) > 0 && rejects > 0 {
				s := queues[i][0]
				queues[i] = queues[i][1:]
				if s.hi-s.lo == len(s.repl) && bytes.Equal(file[s.lo:s.hi], s.repl) {
					rejects-- // the file itself
					continue
				}
				sum := digest(file, s)
				if seen[sum] {
					rejects-- // another site's file
					continue
				}
				seen[sum] = true
				out = append(out, Mutant{Kind: s.kind, Line: s.line, Desc: s.desc, Text: apply(file, s)})
				progress = true
				break
			}
			if len(out) == max {
				return out
			}
		}
		if !progress {
			break
		}
	}
	return out
}

// digest is the SHA-256 of the file s makes, without making it.
func digest(file []byte, s site) [32]byte {
	h := sha256.New()
	h.Write(file[:s.lo])
	h.Write(s.repl)
	h.Write(file[s.hi:])
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

func apply(file []byte, s site) []byte {
	text := make([]byte, 0, len(file)-(s.hi-s.lo)+len(s.repl))
	text = append(text, file[:s.lo]...)
	text = append(text, s.repl...)
	return append(text, file[s.hi:]...)
}

// spread orders one kind's sites so that taking them from the front covers the span: the
// distinct lines in bit-reversed order of their rank (first, middle, quarters, ...), one site
// per line a round, the sites of a line in the order they stand.
func spread(sites []site) []site {
	if len(sites) == 0 {
		return nil
	}
	sort.SliceStable(sites, func(i, j int) bool {
		if sites[i].line != sites[j].line {
			return sites[i].line < sites[j].line
		}
		return sites[i].lo < sites[j].lo
	})
	var lines [][]site
	for i, s := range sites {
		if i == 0 || s.line != sites[i-1].line {
			lines = append(lines, nil)
		}
		lines[len(lines)-1] = append(lines[len(lines)-1], s)
	}
	order := bitReversed(len(lines))
	out := make([]site, 0, len(sites))
	for round := 0; len(out) < len(sites); round++ {
		for _, li := range order {
			if round < len(lines[li]) {
				out = append(out, lines[li][round])
			}
		}
	}
	return out
}

// bitReversed is 0..n-1 ordered by the bit-reversal of each index in the fewest bits that hold
// n-1: 0, n/2, n/4, 3n/4, ... so a prefix of any length is spread over the whole range.
func bitReversed(n int) []int {
	width := bits.Len(uint(n - 1))
	out := make([]int, 0, n)
	for i := 0; i < 1<<width; i++ {
		r := int(bits.Reverse(uint(i)) >> (bits.UintSize - width))
		if width == 0 {
			r = 0
		}
		if r < n {
			out = append(out, r)
		}
	}
	return out
}

// lineIndex maps between 1-based lines and byte offsets.
type lineIndex struct {
	starts []int // offset of each line's first byte
	size   int
}

func newLineIndex(file []byte) lineIndex {
	starts := []int{0}
	for i, c := range file {
		if c == '\n' && i+1 < len(file) {
			starts = append(starts, i+1)
		}
	}
	return lineIndex{starts: starts, size: len(file)}
}

func (x lineIndex) count() int { return len(x.starts) }

// start is line n's first byte.
func (x lineIndex) start(n int) int { return x.starts[n-1] }

// end is the offset just after line n, its newline included.
func (x lineIndex) end(n int) int {
	if n < len(x.starts) {
		return x.starts[n]
	}
	return x.size
}

// line is the 1-based line holding offset off.
func (x lineIndex) line(off int) int {
	return sort.Search(len(x.starts), func(i int) bool { return x.starts[i] > off })
}

// quote is text for a Desc: its first line, shortened, in double quotes.
func quote(text string) string {
	more := false
	if i := strings.IndexByte(text, '\n'); i >= 0 {
		text, more = strings.TrimRight(text[:i], "\r \t"), true
	}
	text = strings.TrimSpace(text)
	const room = 60
	if r := []rune(text); len(r) > room {
		text, more = string(r[:room]), true
	}
	if more {
		text += " ..."
	}
	return `"` + text + `"`
}
