package runner

import (
	"fmt"
	"strconv"
	"strings"
)

// LineRange is a 1-based inclusive span of lines; End 0 means to the end of the file.
type LineRange struct {
	Start, End int
}

func (r LineRange) String() string { return fmt.Sprintf("%d-%d", r.Start, r.End) }

// ParseLineRange reads A-B, A- (to the end) or A (one line). It checks only the form; Within
// checks the bounds against a file.
func ParseLineRange(s string) (LineRange, error) {
	bad := func(why string) (LineRange, error) {
		return LineRange{}, &BadInputError{Reason: fmt.Sprintf("--lines %q: %s; write A-B (1-based, inclusive) or A- for A to the end", s, why)}
	}
	a, b, dash := strings.Cut(strings.TrimSpace(s), "-")
	start, err := strconv.Atoi(a)
	if err != nil || start < 1 || strings.HasPrefix(a, "+") {
		return bad("the first line must be a whole number from 1")
	}
	if !dash {
		return LineRange{Start: start, End: start}, nil
	}
	if b == "" {
		return LineRange{Start: start}, nil
	}
	end, err := strconv.Atoi(b)
	if err != nil || strings.HasPrefix(b, "+") {
		return bad("the last line must be a whole number")
	}
	if end < start {
		return bad("the range is inverted")
	}
	return LineRange{Start: start, End: end}, nil
}

// Within resolves an open end and checks the range against a file of n lines.
func (r LineRange) Within(n int) (LineRange, error) {
	if r.End == 0 {
		r.End = n
	}
	if r.Start > n || r.End > n {
		return r, &BadInputError{Reason: fmt.Sprintf("--lines %d-%d is out of bounds: the file has %s", r.Start, r.End, Count(n, "line", "lines"))}
	}
	if r.End < r.Start {
		return r, &BadInputError{Reason: fmt.Sprintf("--lines %d-%d is inverted", r.Start, r.End)}
	}
	return r, nil
}

// Text is a file as lines, with what it takes to write it back byte for byte: each line's own
// ending, and a byte-order mark.
type Text struct {
	Lines []string
	// Ends holds each line's ending: "\n", "\r\n", or "" for a last line without one.
	Ends []string
	EOL  string // the ending most lines use: "\n" or "\r\n"
	BOM  bool
}

const bom = "\ufeff"

// SplitText reads file content, keeping each line's ending so that lines an edit does not touch
// are written back as they were, whatever the mix.
func SplitText(content string) Text {
	t := Text{EOL: "\n"}
	if strings.HasPrefix(content, bom) {
		t.BOM = true
		content = content[len(bom):]
	}
	crlf := strings.Count(content, "\r\n")
	if lf := strings.Count(content, "\n"); crlf > 0 && crlf*2 >= lf {
		t.EOL = "\r\n"
	}
	for content != "" {
		line, rest, found := strings.Cut(content, "\n")
		end := ""
		if found {
			end = "\n"
			if strings.HasSuffix(line, "\r") {
				line, end = line[:len(line)-1], "\r\n"
			}
		}
		t.Lines = append(t.Lines, line)
		t.Ends = append(t.Ends, end)
		content = rest
	}
	return t
}

// Join writes the text back with its own line endings and byte-order mark.
func (t Text) Join() string {
	var b strings.Builder
	if t.BOM {
		b.WriteString(bom)
	}
	for i, l := range t.Lines {
		b.WriteString(l)
		b.WriteString(t.Ends[i])
	}
	return b.String()
}

// Replace returns the text with lines start..end (1-based, inclusive) replaced by repl. Lines
// outside the span keep their bytes; the new lines take the ending the span used, and the file
// keeps or lacks its final newline as before.
func (t Text) Replace(start, end int, repl []string) Text {
	eol := t.spanEOL(start, end)
	out := t
	n := len(t.Lines) - (end - start + 1) + len(repl)
	out.Lines = make([]string, 0, n)
	out.Ends = make([]string, 0, n)
	out.Lines = append(out.Lines, t.Lines[:start-1]...)
	out.Ends = append(out.Ends, t.Ends[:start-1]...)
	out.Lines = append(out.Lines, repl...)
	for range repl {
		out.Ends = append(out.Ends, eol)
	}
	out.Lines = append(out.Lines, t.Lines[end:]...)
	out.Ends = append(out.Ends, t.Ends[end:]...)
	for i := range out.Ends {
		if out.Ends[i] == "" {
			out.Ends[i] = eol
		}
	}
	if len(out.Lines) > 0 && len(t.Lines) > 0 {
		out.Ends[len(out.Ends)-1] = t.Ends[len(t.Ends)-1]
	}
	return out
}

// spanEOL is the ending most lines of the span use; the file's for an empty span or a tie.
func (t Text) spanEOL(start, end int) string {
	crlf, lf := 0, 0
	for i := start - 1; i < end && i < len(t.Ends); i++ {
		switch t.Ends[i] {
		case "\r\n":
			crlf++
		case "\n":
			lf++
		}
	}
	switch {
	case crlf > lf:
		return "\r\n"
	case lf > crlf:
		return "\n"
	}
	return t.EOL
}

// EditError is a reply locum could not turn into an edit: a failed attempt, fed back to the
// model, never a guess.
type EditError struct{ Reason string }

func (e *EditError) Error() string { return e.Reason }

// FencedBlocks returns the contents of the fenced code blocks (``` or ~~~, any length) in s. A
// closing fence is the same character, at least as long, on a line of its own.
func FencedBlocks(s string) ([]string, error) {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var blocks []string
	for i := 0; i < len(lines); i++ {
		ch, n := fence(lines[i])
		if n == 0 {
			continue
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if c2, n2 := fence(lines[i]); c2 == ch && n2 >= n && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(lines[i]), string(ch))) == "" {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			return blocks, &EditError{Reason: "a fenced block is not closed"}
		}
		blocks = append(blocks, strings.Join(body, "\n"))
	}
	return blocks, nil
}

func fence(line string) (byte, int) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return 0, 0
	}
	return t[0], n
}

// SpanReplacement reads a span-format reply: exactly one fenced block, the new span.
func SpanReplacement(answer string) ([]string, error) {
	blocks, err := FencedBlocks(answer)
	if err != nil {
		return nil, err
	}
	switch len(blocks) {
	case 0:
		return nil, &EditError{Reason: "the reply has no fenced code block; reply with the new span inside one ``` block"}
	case 1:
		// Every line between the fences is the span, a last empty one included.
		if blocks[0] == "" {
			return nil, nil
		}
		return strings.Split(blocks[0], "\n"), nil
	}
	return nil, &EditError{Reason: fmt.Sprintf("the reply has %d fenced code blocks; reply with exactly one, holding the whole new span", len(blocks))}
}

// SearchReplace is one SEARCH/REPLACE block.
type SearchReplace struct {
	Search, Replace string
}

const (
	markSearch  = "<<<<<<< SEARCH"
	markDivider = "======="
	markReplace = ">>>>>>> REPLACE"
)

// ParseBlocks reads SEARCH/REPLACE blocks from a reply. Text outside blocks is ignored.
func ParseBlocks(answer string) ([]SearchReplace, error) {
	lines := strings.Split(strings.ReplaceAll(answer, "\r\n", "\n"), "\n")
	var out []SearchReplace
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != markSearch {
			continue
		}
		var search, repl []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != markDivider; j++ {
			if strings.TrimSpace(lines[j]) == markSearch || strings.TrimSpace(lines[j]) == markReplace {
				return nil, &EditError{Reason: fmt.Sprintf("SEARCH block %d has no ======= line", len(out)+1)}
			}
			search = append(search, lines[j])
		}
		if j == len(lines) {
			return nil, &EditError{Reason: fmt.Sprintf("SEARCH block %d has no ======= line", len(out)+1)}
		}
		k := j + 1
		for ; k < len(lines) && strings.TrimSpace(lines[k]) != markReplace; k++ {
			if strings.TrimSpace(lines[k]) == markSearch {
				break
			}
			repl = append(repl, lines[k])
		}
		if k == len(lines) || strings.TrimSpace(lines[k]) != markReplace {
			return nil, &EditError{Reason: fmt.Sprintf("block %d has no >>>>>>> REPLACE line", len(out)+1)}
		}
		out = append(out, SearchReplace{Search: strings.Join(search, "\n"), Replace: strings.Join(repl, "\n")})
		i = k
	}
	if len(out) == 0 {
		return nil, &EditError{Reason: "the reply has no SEARCH/REPLACE block; use <<<<<<< SEARCH, =======, >>>>>>> REPLACE"}
	}
	return out, nil
}

// ApplyBlocks applies every block to span lines, all or nothing: each search text must occur
// exactly once in the span as it stands when the block is applied.
func ApplyBlocks(span []string, blocks []SearchReplace) ([]string, error) {
	text := strings.Join(span, "\n")
	for i, b := range blocks {
		if b.Search == "" {
			return nil, &EditError{Reason: fmt.Sprintf("block %d has an empty SEARCH text", i+1)}
		}
		switch n := strings.Count(text, b.Search); {
		case n == 0:
			return nil, &EditError{Reason: fmt.Sprintf("block %d: the SEARCH text occurs nowhere in the span; copy it exactly from the span", i+1)}
		case n > 1:
			return nil, &EditError{Reason: fmt.Sprintf("block %d: the SEARCH text occurs %d times in the span; include more lines so it occurs once", i+1, n)}
		}
		text = strings.Replace(text, b.Search, b.Replace, 1)
	}
	if text == "" {
		return nil, nil
	}
	return strings.Split(text, "\n"), nil
}

// DiffStat counts lines added and removed between two versions, by longest common subsequence
// of lines (spans are small, so the quadratic table is cheap).
func DiffStat(before, after []string) (added, removed int) {
	// Trim the common head and tail first: most edits touch a few lines.
	for len(before) > 0 && len(after) > 0 && before[0] == after[0] {
		before, after = before[1:], after[1:]
	}
	for len(before) > 0 && len(after) > 0 && before[len(before)-1] == after[len(after)-1] {
		before, after = before[:len(before)-1], after[:len(after)-1]
	}
	if len(before)*len(after) > 4_000_000 {
		return len(after), len(before)
	}
	prev := make([]int, len(after)+1)
	cur := make([]int, len(after)+1)
	for i := 1; i <= len(before); i++ {
		for j := 1; j <= len(after); j++ {
			if before[i-1] == after[j-1] {
				cur[j] = prev[j-1] + 1
			} else {
				cur[j] = max(prev[j], cur[j-1])
			}
		}
		prev, cur = cur, prev
	}
	common := prev[len(after)]
	return len(after) - common, len(before) - common
}
