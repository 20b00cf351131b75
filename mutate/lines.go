package mutate

import (
	"fmt"
	"path/filepath"
	"strings"
)

// syntax is what the line scanner knows of a language: where comments are, and whether a
// single quote opens a string. It knows no more: a line-level mutant only has to avoid
// comments and stay on one line.
type syntax struct {
	line   []string    // line comment openers
	block  [][2]string // block comment openers and closers
	single bool        // ' quotes a string
}

var (
	cLike     = syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}}
	scriptC   = syntax{line: []string{"//"}, block: [][2]string{{"/*", "*/"}}, single: true}
	hash      = syntax{line: []string{"#"}, single: true}
	python    = syntax{line: []string{"#"}, block: [][2]string{{`"""`, `"""`}, {"'''", "'''"}}, single: true}
	dashes    = syntax{line: []string{"--"}, block: [][2]string{{"/*", "*/"}}, single: true}
	semicolon = syntax{line: []string{";"}}
	percent   = syntax{line: []string{"%"}}
	markup    = syntax{block: [][2]string{{"<!--", "-->"}}}
	// plain is any other file: the commonest comment forms, no single-quoted strings (an
	// apostrophe in prose is no quote).
	plain = syntax{line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}}
)

var syntaxes = map[string]syntax{
	".c": cLike, ".h": cLike, ".cc": cLike, ".cpp": cLike, ".cxx": cLike, ".hpp": cLike, ".hh": cLike,
	".java": cLike, ".cs": cLike, ".kt": cLike, ".kts": cLike, ".scala": cLike, ".swift": cLike,
	".go": cLike, ".rs": cLike, ".dart": cLike, ".proto": cLike,
	".js": scriptC, ".jsx": scriptC, ".mjs": scriptC, ".cjs": scriptC, ".ts": scriptC, ".tsx": scriptC,
	".css": scriptC, ".scss": scriptC, ".less": scriptC,
	".php": {line: []string{"//", "#"}, block: [][2]string{{"/*", "*/"}}, single: true},
	".py":  python, ".pyi": python,
	".sh": hash, ".bash": hash, ".zsh": hash, ".rb": hash, ".pl": hash, ".pm": hash, ".r": hash,
	".yaml": hash, ".yml": hash, ".toml": hash, ".mk": hash, ".cmake": hash, ".conf": hash,
	".cfg": hash, ".tf": hash, ".dockerfile": hash, "makefile": hash, "dockerfile": hash,
	".sql": dashes, ".lua": dashes, ".hs": dashes,
	".ini":  {line: []string{";", "#"}},
	".lisp": semicolon, ".el": semicolon, ".clj": semicolon, ".scm": semicolon, ".asm": semicolon, ".s": semicolon,
	".tex": percent, ".erl": percent,
	".html": markup, ".htm": markup, ".xml": markup, ".svg": markup, ".md": markup,
	".json": {},
}

func syntaxOf(name string) syntax {
	base := strings.ToLower(filepath.Base(name))
	if s, ok := syntaxes[base]; ok {
		return s
	}
	if s, ok := syntaxes[strings.ToLower(filepath.Ext(name))]; ok {
		return s
	}
	return plain
}

// lineSites collects the line-level sites of lines start..end. The file is scanned from its
// first line so that a block comment open at the span's start is known.
func lineSites(name string, file []byte, idx lineIndex, start, end int) []site {
	sc := lineScanner{syn: syntaxOf(name), inBlock: -1}
	var sites []site
	for n := 1; n <= end && len(sites) < maxSites; n++ {
		lo, hi := idx.start(n), idx.end(n)
		text := strings.TrimSuffix(string(file[lo:hi]), "\n")
		lits, substantive := sc.scan(text)
		if n < start {
			continue
		}
		if substantive {
			sites = append(sites, site{kind: DeleteLine, line: n, lo: lo, hi: hi,
				desc: fmt.Sprintf("line %d: deleted %s", n, quote(text))})
		}
		for _, l := range lits {
			l.kind, l.line = ChangeLiteral, n
			l.lo, l.hi = l.lo+lo, l.hi+lo
			l.desc = fmt.Sprintf("line %d: %s", n, l.desc)
			sites = append(sites, l)
		}
	}
	return sites
}

// lineScanner reads a file a line at a time, carrying whether a block comment is open.
type lineScanner struct {
	syn     syntax
	inBlock int // index into syn.block, -1 for none
}

// scan finds the literals of one line outside comments (their offsets within the line) and
// whether the line holds any code beyond blanks and punctuation.
func (sc *lineScanner) scan(line string) (lits []site, substantive bool) {
	for i := 0; i < len(line); {
		if sc.inBlock >= 0 {
			closer := sc.syn.block[sc.inBlock][1]
			j := strings.Index(line[i:], closer)
			if j < 0 {
				return lits, substantive
			}
			i += j + len(closer)
			sc.inBlock = -1
			continue
		}
		if k := sc.opensBlock(line[i:]); k >= 0 {
			sc.inBlock = k
			i += len(sc.syn.block[k][0])
			continue
		}
		if sc.opensLine(line[i:]) {
			return lits, substantive
		}
		c := line[i]
		switch {
		case c == '"' || c == '\'' && sc.syn.single:
			j := closingQuote(line, i)
			substantive = true
			if j < 0 {
				return lits, substantive // a string going on past the line: leave it be
			}
			lits = append(lits, stringSite(line, i, j))
			i = j + 1
		case isDigit(c) && (i == 0 || !isWord(line[i-1]) && line[i-1] != '.'):
			j := i
			for j < len(line) && (isWord(line[j]) || line[j] == '.') {
				j++
			}
			substantive = true
			if s, ok := numberSite(line[i:j]); ok {
				s.lo, s.hi = s.lo+i, s.hi+i
				lits = append(lits, s)
			}
			i = j
		case isWord(c):
			j := i
			for j < len(line) && isWord(line[j]) {
				j++
			}
			substantive = true
			if to, ok := booleans[line[i:j]]; ok {
				lits = append(lits, site{lo: i, hi: j, repl: []byte(to), desc: quote(line[i:j]) + " to " + quote(to)})
			}
			i = j
		default:
			if c >= 0x80 {
				substantive = true // a letter of another script
			}
			i++
		}
	}
	return lits, substantive
}

var booleans = map[string]string{
	"true": "false", "false": "true", "True": "False", "False": "True", "TRUE": "FALSE", "FALSE": "TRUE",
}

func (sc *lineScanner) opensBlock(rest string) int {
	for k, b := range sc.syn.block {
		if strings.HasPrefix(rest, b[0]) {
			return k
		}
	}
	return -1
}

func (sc *lineScanner) opensLine(rest string) bool {
	for _, p := range sc.syn.line {
		if strings.HasPrefix(rest, p) {
			return true
		}
	}
	return false
}

// closingQuote is the index of the quote closing the string opened at i, past backslash
// escapes; -1 when the line ends first.
func closingQuote(line string, i int) int {
	q := line[i]
	for j := i + 1; j < len(line); j++ {
		switch line[j] {
		case '\\':
			j++
		case q:
			return j
		}
	}
	return -1
}

// stringSite empties the content of the string quoted from i to j, or gives an empty one an x.
func stringSite(line string, i, j int) site {
	content := line[i+1 : j]
	if content == "" {
		return site{lo: i + 1, hi: j, repl: []byte("x"), desc: "empty string given \"x\""}
	}
	return site{lo: i + 1, hi: j, desc: "string " + quote(content) + " emptied"}
}

// numberSite adds one to a decimal number, the integer part of one with a fraction; a number
// of any other form (hex, exponent, version string) is left alone.
func numberSite(tok string) (site, bool) {
	whole, frac, hasFrac := strings.Cut(tok, ".")
	if whole == "" || !allDigits(whole) || hasFrac && (frac == "" || !allDigits(frac)) {
		return site{}, false
	}
	next := increment(whole)
	return site{lo: 0, hi: len(whole), repl: []byte(next), desc: quote(tok) + " to " + quote(next+tok[len(whole):])}, true
}

// increment is the decimal digits s plus one, as long as it needs: "199" to "200", "9" to "10".
func increment(s string) string {
	b := []byte(s)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] < '9' {
			b[i]++
			return string(b)
		}
		b[i] = '0'
	}
	return "1" + string(b)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isWord(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_'
}
