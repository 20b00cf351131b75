// Package evidence holds what a mode whose reply is claims about numbered lines shares with the
// others, below them all: the evidence gate that holds each claim to the lines it cites, the
// request for a reply of that shape with its one retry, and the handoff's shape (its sections,
// its instruction, its parse and its rendering), which the handoff mode and its eval task share.
package evidence

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/locumdev/locum/runner/scope"
)

// Claim is one statement about a text and the lines it rests on, with the gate's verdict. The
// verdict is the gate's alone: whatever the model says about its own claims is ignored.
type Claim struct {
	Text  string `json:"text"`
	Lines [2]int `json:"lines"`
	// Quote is what the claim rests on in the file's own words: the model's quote where it gave
	// one and the lines hold it, else the cited lines as one short line, taken by the gate.
	Quote   string `json:"quote"`
	Verdict string `json:"verdict"` // supported or unsupported
	Reason  string `json:"reason,omitempty"`
}

// Supported reports the gate's verdict.
func (c Claim) Supported() bool { return c.Verdict == "supported" }

// Text is the lines claims may cite: Lines[0] is the file's line First, so a text may be the end
// of a file (a log's last lines) and still be cited by the file's own line numbers.
type Text struct {
	Lines []string
	First int
}

// Whole is a file's lines, from its first.
func Whole(lines []string) Text { return Text{Lines: lines, First: 1} }

// Line is line n of the file.
func (t Text) Line(n int) string { return t.Lines[n-t.First] }

// Span is lines a to b of the file.
func (t Text) Span(a, b int) []string { return t.Lines[a-t.First : b-t.First+1] }

// Range is the lines the text holds.
func (t Text) Range() scope.LineRange {
	return scope.LineRange{Start: t.First, End: t.First + len(t.Lines) - 1}
}

// Rules are what a mode holds its claims to beyond the gate's own checks.
type Rules struct {
	// Placeholder is the claim text the mode's instruction shows as its example. A small model
	// copies it as the claim itself; such a claim says nothing, however good its lines.
	Placeholder string
	// Copies lets a claim's words be one line's words and no more. A digest that names a line
	// back (a heading) says nothing of it; a handoff picks lines out of a log as they are.
	Copies bool
}

// MaxClaims is how many claims a reply of maxWords words may hold: one per twelve words, from 3
// to 20.
func MaxClaims(maxWords int64) int {
	return int(min(max(maxWords/12, 3), 20))
}

// maxWindow is the most lines a supported claim rests on. A small model's line numbers are often
// a few lines off, so the gate looks for the claim's words in every window of the span, nearest
// the model's citation first, and cites the lines where it found them.
const maxWindow = 8

// maxQuote bounds the excerpt of the cited lines a claim carries, taken by locum from the file.
const maxQuote = 160

// Gate is the evidence gate: it holds each claim to the lines of span, which text holds. The
// model says what lines a claim rests on, and may quote them; the lines a supported claim cites
// and its quote are locum's, found in the file. A claim is supported only when
//   - its text is its own: not empty, not the instruction's example (rules.Placeholder), not the
//     lines copied (unless rules.Copies);
//   - the lines the model cited lie inside the span;
//   - its quote, where it gives one, is in the span as written (white space aside): in the lines
//     it cites, else in the nearest lines that hold it, which it then rests on;
//   - within some window of at most maxWindow lines of the span (holding its quote's lines where
//     it has one; of those, the one holding most of the claim's words, nearest the model's
//     citation on a tie), at least a third of its words, and two when it has two, are the
//     window's words (words of three letters or more that are not glue words, matched with their
//     endings and the parts of identifiers aside);
//   - every number it states is written in those lines, and every name of the file's code it
//     names (TryAcquire, max_tokens, the Acquire function) too: a claim about a function cites
//     the lines that hold it.
//
// It judges what the claim rests on, never whether the claim reads the lines rightly: a claim
// that turns a line's meaning round with the line's own words passes.
func Gate(claims []Claim, text Text, span scope.LineRange, rules Rules) []Claim {
	out := make([]Claim, len(claims))
	// The span's words, each line's, and the names its code calls or declares, read once for
	// every claim's search.
	var words [][]string
	var spanNames map[string]bool
	for i, c := range claims {
		quoted := normalizeQuote(c.Quote)
		c.Verdict, c.Reason, c.Quote = "unsupported", "", ""
		a, b := c.Lines[0], c.Lines[1]
		said := strings.ToLower(strings.Trim(normalizeSpace(c.Text), ".!;: "))
		terms := termsOf(c.Text)
		switch {
		case said == "":
			c.Reason = "no claim text"
		case rules.Placeholder != "" && said == rules.Placeholder:
			c.Reason = fmt.Sprintf("the text is the instruction's example (%q), not a claim", rules.Placeholder)
		case a < span.Start || b > span.End || a > b:
			c.Reason = fmt.Sprintf("lines %d-%d are outside the span %d-%d", a, b, span.Start, span.End)
		case len(terms) == 0:
			c.Reason = "the text has no word of its own to check against the lines"
		default:
			if words == nil {
				words = lineWords(text.Span(span.Start, span.End))
				spanNames = declared(text.Span(span.Start, span.End))
			}
			var anchor *[2]int
			if quoted != "" {
				found, qa, qb, ok := quoteIn(quoted, text, span, a, b)
				quoted = found
				if !ok {
					c.Reason = fmt.Sprintf("the quote %q is not in lines %d-%d, nor in any other lines of the span %d-%d", cut(quoted, maxQuote), a, b, span.Start, span.End)
					break
				}
				anchor = &[2]int{qa, qb}
			}
			wa, wb, matched := bestWindow(terms, words, span, a, b, anchor)
			cited := text.Span(wa, wb)
			switch {
			case !backs(matched, len(terms)) && anchor != nil:
				c.Reason = fmt.Sprintf("at most %d of the claim's %d words are in any %d lines that hold its quote (lines %d-%d)", matched, len(terms), maxWindow, anchor[0], anchor[1])
			case !backs(matched, len(terms)):
				c.Reason = fmt.Sprintf("at most %d of the claim's %d words are in any %d lines of the span", matched, len(terms), maxWindow)
			case !rules.Copies && copiesALine(c.Text, cited):
				c.Reason = "the text copies a line instead of saying what the lines say"
			default:
				c.Lines = [2]int{wa, wb}
				c.Quote = excerpt(cited)
				if quoted != "" {
					c.Quote = cut(quoted, maxQuote)
				}
				if n := missingNumber(c.Text, cited); n != "" {
					c.Reason = fmt.Sprintf("the number %s is not in lines %d-%d", n, wa, wb)
				} else if n := missingName(c.Text, cited, spanNames); n != "" {
					c.Reason = fmt.Sprintf("the name %s is not in lines %d-%d", n, wa, wb)
				} else {
					c.Verdict = "supported"
				}
			}
		}
		out[i] = c
	}
	return out
}

func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// glueWords carry no claim: articles, pronouns, auxiliaries and the words every summary uses of
// its subject.
var glueWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`the and for with that this these those from are was were has have had its
		into onto each which when what who whom whose where while than then them they their there here not but
		all any can could will would shall should may might must also been being does did doing about over
		under such only other some more most very just both either neither nor per via our your you his her one
		she him file files line lines code section sections text describes described explains explained
		says said defines defined contains contain provides provided uses used using`) {
		glueWords[w] = true
	}
}

// wordsOf is s's words, lower-cased: its runs of letters and digits.
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// termsOf is the claim's words that can be checked against lines: three letters or more, not a
// glue word nor the instruction's example, each once.
func termsOf(text string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range wordsOf(splitIdentifiers(text)) {
		if utf8.RuneCountInString(w) < 3 || glueWords[w] || seen[w] || isNumber(w) {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// splitIdentifiers adds, after every camelCase or snake_case identifier, its parts, so a claim
// about "the pushBack method" and a line with "PushBack" share "push" and "back".
func splitIdentifiers(s string) string {
	var b strings.Builder
	for _, field := range strings.Fields(s) {
		b.WriteString(field)
		b.WriteByte(' ')
		prev := rune(0)
		for _, r := range field {
			if r == '_' || (unicode.IsUpper(r) && unicode.IsLower(prev)) {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			prev = r
		}
		b.WriteByte(' ')
	}
	return b.String()
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}

// stem is a word without a plural's or a verb's ending.
func stem(w string) string {
	for _, suffix := range []string{"ing", "ies", "es", "ed", "s"} {
		if strings.HasSuffix(w, suffix) && utf8.RuneCountInString(w)-len(suffix) >= 3 {
			return strings.TrimSuffix(w, suffix)
		}
	}
	return w
}

// sameWord says a claim's word and a line's are one word in two forms: equal stems, or a shared
// start of five letters or more that is most of the shorter ("convert", "conversion").
func sameWord(x, y string) bool {
	sx, sy := stem(x), stem(y)
	if sx == sy {
		return true
	}
	n := 0
	for n < len(sx) && n < len(sy) && sx[n] == sy[n] {
		n++
	}
	shorter := min(len(sx), len(sy))
	return n >= 5 && 10*n >= 7*shorter
}

// lineWords is each line's words, identifiers split.
func lineWords(lines []string) [][]string {
	out := make([][]string, len(lines))
	for i, l := range lines {
		out[i] = wordsOf(splitIdentifiers(l))
	}
	return out
}

// termMatches says, for each term, whether it is one of words.
func termMatches(terms []string, words []string) []bool {
	out := make([]bool, len(terms))
	for i, t := range terms {
		for _, w := range words {
			if t == w || sameWord(t, w) {
				out[i] = true
				break
			}
		}
	}
	return out
}

// bestWindow finds the lines of the span (words, its lineWords) that back the claim: the model's
// citation a..b where it spans at most maxWindow lines and backs it, else of every window of at
// most maxWindow lines the nearest the citation of those in which enough terms match (else the
// one in which most do). Where anchor is set (the lines holding the claim's quote), only a window
// that holds those lines counts. It returns that window shrunk to its first and last line with a
// matching word or of the anchor, and how many terms matched.
func bestWindow(terms []string, words [][]string, span scope.LineRange, a, b int, anchor *[2]int) (int, int, int) {
	// hits[i][k]: line span.Start+i holds term k.
	hits := make([][]bool, len(words))
	for i, w := range words {
		hits[i] = termMatches(terms, w)
	}
	distance := func(wa, wb int) int {
		switch {
		case wb < a:
			return a - wb
		case wa > b:
			return wa - b
		}
		return 0
	}
	holds := func(wa, wb int) bool { return anchor == nil || wa <= anchor[0] && anchor[1] <= wb }
	// shrunk is the lines from..to-1 of the span cut to those with a term and the anchor's.
	shrunk := func(from, to int) (int, int, int) {
		first, last, matched := hitLines(hits, len(terms), from, to)
		if anchor != nil {
			if first < 0 || anchor[0]-span.Start < first {
				first = anchor[0] - span.Start
			}
			last = max(last, anchor[1]-span.Start)
		}
		return first, last, matched
	}
	// The model's own citation, where it is short enough, holds the anchor and backs the claim,
	// stands.
	if b-a+1 <= maxWindow && holds(a, b) {
		if first, last, matched := shrunk(a-span.Start, b-span.Start+1); backs(matched, len(terms)) {
			return span.Start + first, span.Start + last, matched
		}
	}
	size := min(maxWindow, len(words))
	bestA, bestB, best, bestDist := a, b, -1, 0
	for start := 0; start+size <= len(words); start++ {
		if !holds(span.Start+start, span.Start+start+size-1) {
			continue
		}
		first, last, matched := shrunk(start, start+size)
		if first < 0 {
			continue
		}
		wa, wb := span.Start+first, span.Start+last
		d := distance(wa, wb)
		if best < 0 || better(len(terms), matched, d, best, bestDist) {
			bestA, bestB, best, bestDist = wa, wb, matched, d
		}
	}
	return bestA, bestB, max(best, 0)
}

// hitLines is, for the lines from..to-1 of hits, the first and last with a term, -1 when none
// has, and how many terms some line of them holds.
func hitLines(hits [][]bool, terms, from, to int) (first, last, matched int) {
	first, last = -1, -1
	for k := range terms {
		for i := from; i < to; i++ {
			if hits[i][k] {
				matched++
				break
			}
		}
	}
	for i := from; i < to; i++ {
		if slices.Contains(hits[i], true) {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return first, last, matched
}

// better says a window with matched terms at distance d from the citation beats the best so far:
// one that backs the claim beats one that does not; of two that do, the nearer, then the one with
// more of the claim's words; of two that do not, the one with more words, then the nearer.
func better(terms, matched, d, best, bestDist int) bool {
	ok, bestOK := backs(matched, terms), backs(best, terms)
	switch {
	case ok != bestOK:
		return ok
	case ok:
		return d < bestDist || d == bestDist && matched > best
	}
	return matched > best || matched == best && d < bestDist
}

// backs says matched of a claim's terms are enough: a third of them, and two when it has two.
func backs(matched, terms int) bool {
	return matched >= 0 && 3*matched >= terms && matched >= min(2, terms)
}

// missingNumber is the first number the text states that the lines do not write, or "".
func missingNumber(text string, lines []string) string {
	written := map[string]bool{}
	for _, w := range wordsOf(strings.Join(lines, " ")) {
		for _, run := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) {
			written[run] = true
		}
	}
	for _, w := range wordsOf(text) {
		for _, run := range strings.FieldsFunc(w, func(r rune) bool { return !unicode.IsDigit(r) }) {
			if !written[run] {
				return run
			}
		}
	}
	return ""
}

// identifier is a word as code writes one.
var identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// codeName says a word is a name as code writes it, not an English word: with an underscore
// inside, or a capital after a small letter (TryAcquire, maxTokens).
func codeName(w string) bool {
	if strings.Contains(strings.Trim(w, "_"), "_") {
		return true
	}
	for i := 1; i < len(w); i++ {
		if unicode.IsUpper(rune(w[i])) && unicode.IsLower(rune(w[i-1])) {
			return true
		}
	}
	return false
}

// missingName is the first name of the file's code the text names that the cited lines do not
// hold as a word, or "": a word written as code (codeName), or a capitalized word past the
// text's first that the span's code calls or declares (spanNames: the Acquire function), so that
// a word of the span's prose (The Go Authors) is not taken for one.
func missingName(text string, cited []string, spanNames map[string]bool) string {
	held := identifiers(cited)
	for i, w := range identifier.FindAllString(text, -1) {
		switch {
		case held[w]:
		case codeName(w):
			return w
		case i > 0 && unicode.IsUpper(rune(w[0])) && spanNames[w]:
			return w
		}
	}
	return ""
}

// called is a name written as code: before a parenthesis, or after a keyword that declares one.
var called = regexp.MustCompile(`(?:\b(?:func|type|class|def|fn|struct|interface|enum|trait|const|let|var)\s+([A-Za-z_][A-Za-z0-9_]*)|\b([A-Za-z_][A-Za-z0-9_]*)\()`)

// declared are the names the lines call or declare.
func declared(lines []string) map[string]bool {
	out := map[string]bool{}
	for _, m := range called.FindAllStringSubmatch(strings.Join(lines, "\n"), -1) {
		out[m[1]+m[2]] = true
	}
	return out
}

func identifiers(lines []string) map[string]bool {
	out := map[string]bool{}
	for _, w := range identifier.FindAllString(strings.Join(lines, "\n"), -1) {
		out[w] = true
	}
	return out
}

// copiesALine says the text's words are one line's words, in order and no more: a heading or a
// line named back says nothing of them.
func copiesALine(text string, lines []string) bool {
	words := strings.Join(wordsOf(text), " ")
	for _, l := range lines {
		if strings.Join(wordsOf(l), " ") == words {
			return true
		}
	}
	return false
}

// excerpt is the cited lines as one line of at most maxQuote bytes, cut at a rune.
func excerpt(lines []string) string {
	return cut(normalizeSpace(strings.Join(lines, " ")), maxQuote)
}

// cut is s in at most n bytes, cut at a rune and marked where it was cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "..."
}

// quoteMarks are what a model puts around a quote, or where it cut one, that the file need not
// hold.
const quoteMarks = "\"'`“”‘’«»"

// normalizeQuote is a model's quote with its white space folded; "" where it holds no letter or
// digit.
func normalizeQuote(q string) string {
	q = normalizeSpace(q)
	if !hasWord(q) {
		return ""
	}
	return q
}

func hasWord(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) })
}

// quoteForms are the ways the lines may hold a model's quote q, in the order tried: as it is;
// without the quote marks around it; and each without a closing ellipsis, a model's mark of
// where it cut the quote. A form with no letter or digit is none.
func quoteForms(q string) []string {
	forms := []string{q}
	bare := q
	for {
		trimmed := strings.TrimSpace(strings.Trim(bare, quoteMarks))
		if trimmed == bare {
			break
		}
		bare = trimmed
	}
	if bare != q {
		forms = append(forms, bare)
	}
	for _, f := range slices.Clone(forms) {
		for _, ellipsis := range []string{"...", "…"} {
			if short := strings.TrimSpace(strings.TrimSuffix(f, ellipsis)); short != f {
				forms = append(forms, short)
			}
		}
	}
	return slices.DeleteFunc(forms, func(f string) bool { return !hasWord(f) })
}

// quoteIn finds a form of the quote q (quoteForms) in the span as findQuote does, and returns the
// form found.
func quoteIn(q string, text Text, span scope.LineRange, a, b int) (found string, qa, qb int, ok bool) {
	for _, f := range quoteForms(q) {
		if qa, qb, ok := findQuote(f, text, span, a, b); ok {
			return f, qa, qb, true
		}
	}
	return q, 0, 0, false
}

// findQuote finds the lines of the span that hold the quote q (white space folded, a quote over
// several lines read with one space between them): of the fewest lines that hold it, at most
// maxWindow, those nearest the citation a..b, the first on a tie. ok is false where no lines of
// the span hold it.
func findQuote(q string, text Text, span scope.LineRange, a, b int) (qa, qb int, ok bool) {
	distance := func(x, y int) int {
		switch {
		case y < a:
			return a - y
		case x > b:
			return x - b
		}
		return 0
	}
	best := -1
	for s := span.Start; s <= span.End; s++ {
		joined := ""
		for e := s; e <= span.End && e-s < maxWindow; e++ {
			if e > s {
				joined += " "
			}
			joined += normalizeSpace(text.Line(e))
			if !strings.Contains(joined, q) {
				continue
			}
			// Lines after the first that hold it alone are found from their own first line.
			if e == s || !strings.Contains(joined[len(normalizeSpace(text.Line(s)))+1:], q) {
				if d := distance(s, e); best < 0 || d < best {
					qa, qb, best = s, e, d
				}
			}
			break
		}
	}
	return qa, qb, best >= 0
}
