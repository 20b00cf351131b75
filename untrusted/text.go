package untrusted

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Escape makes text from a model, a server or a repository safe to print on one terminal line:
// control characters (newlines, carriage returns, ESC and the rest of C0, DEL, C1) and the
// Unicode controls that reorder or hide text are written as Go-style escapes, and bytes that are
// not UTF-8 as \xNN. Everything else, backslashes included, is left as it is: escaping is for
// the terminal, and --json keeps the exact text.
func Escape(s string) string {
	if safe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case hidden(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EscapeLines escapes each line of s but keeps its line breaks and tabs: for a block of text that
// is meant to span lines (a verify command's output tail), where only what drives the terminal
// must go.
func EscapeLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		cells := strings.Split(l, "\t")
		for j, c := range cells {
			cells[j] = Escape(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

func safe(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// hidden reports the C1 controls and the format characters that break, reorder or hide text on
// a terminal (the Trojan Source set, zero-width joiners and marks, line and paragraph separators,
// the Arabic letter mark, interlinear annotations, the byte-order mark).
func hidden(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2060 && r <= 0x2069, r == 0xfeff:
		return true
	case r == 0x2028 || r == 0x2029 || r == 0x061c || (r >= 0xfff9 && r <= 0xfffb):
		// Line and paragraph separators break a line on some terminals; the Arabic letter mark
		// reorders; interlinear annotations hide text.
		return true
	}
	return false
}
