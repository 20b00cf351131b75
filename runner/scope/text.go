package scope

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// LineRange is a 1-based inclusive span of lines; End 0 means to the end of the file.
type LineRange struct {
	Start, End int
}

func (r LineRange) String() string { return fmt.Sprintf("%d-%d", r.Start, r.End) }

// LinesForm is how a span's lines are written, as help and a refusal say it.
const LinesForm = "A-B (1-based, inclusive), A- to the end, or A for line A alone"

// ParseLineRange reads A-B, A- (to the end) or A (one line). It checks only the form; Within
// checks the bounds against a file.
func ParseLineRange(s string) (LineRange, error) {
	bad := func(why string) (LineRange, error) {
		return LineRange{}, engine.BadInputf("{lines} %q: %s; write %s", s, why, LinesForm)
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
		return r, engine.BadInputf("{lines} %d-%d is out of bounds: the file has %s", r.Start, r.End, client.Count(n, "line", "lines"))
	}
	if r.End < r.Start {
		return r, engine.BadInputf("{lines} %d-%d is inverted", r.Start, r.End)
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
