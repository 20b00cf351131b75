package editcheck

import (
	"go/scanner"
	"go/token"
	"sort"
)

// tok is one token of Go source as the comparison sees it: its kind and text, and its byte
// offset in the source it came from, which the comparison ignores and the messages use.
type tok struct {
	kind token.Token
	lit  string
	off  int
}

// tokens scans src without its comments into the tokens two sources are compared by. Whitespace
// and comments are gone, and so are the punctuation differences a reformatting makes without
// changing the program: an automatic semicolon and an explicit one are the same token, and a
// semicolon or comma just before a closing bracket, or before the end of the file, is dropped
// (each is optional there). A newline that ends a statement stays a semicolon, so moving code
// across a line break that changes its meaning (`return` above `x`) is still a difference.
// Scanning errors are ignored: the scanner goes on, and a parse elsewhere reports them.
func tokens(src []byte) []tok {
	fset := token.NewFileSet()
	file := fset.AddFile("", fset.Base(), len(src))
	var s scanner.Scanner
	s.Init(file, src, func(token.Position, string) {}, 0)
	var out []tok
	for {
		pos, kind, lit := s.Scan()
		if kind == token.EOF {
			break
		}
		switch kind {
		case token.RPAREN, token.RBRACK, token.RBRACE:
			out = dropOptional(out)
		case token.SEMICOLON:
			lit = ";"
		case token.IDENT, token.INT, token.FLOAT, token.IMAG, token.CHAR, token.STRING:
		default:
			// An operator or keyword is its kind; its text adds nothing.
			lit = ""
		}
		out = append(out, tok{kind: kind, lit: lit, off: file.Offset(pos)})
	}
	return dropOptional(out)
}

// dropOptional removes the semicolons and commas that end ts, which are optional before a closing
// bracket or the end of the file (several semicolons in a row are empty statements).
func dropOptional(ts []tok) []tok {
	for len(ts) > 0 {
		switch ts[len(ts)-1].kind {
		case token.SEMICOLON, token.COMMA:
			ts = ts[:len(ts)-1]
			continue
		}
		return ts
	}
	return ts
}

// within is the tokens of ts whose offsets lie in [from, to).
func within(ts []tok, from, to int) []tok {
	lo := sort.Search(len(ts), func(i int) bool { return ts[i].off >= from })
	hi := sort.Search(len(ts), func(i int) bool { return ts[i].off >= to })
	if hi < lo {
		return nil
	}
	return ts[lo:hi]
}

// firstDiff is the index of the first token at which a and b differ, or -1 when they are equal.
func firstDiff(a, b []tok) int {
	for i := range min(len(a), len(b)) {
		if a[i].kind != b[i].kind || a[i].lit != b[i].lit {
			return i
		}
	}
	if len(a) == len(b) {
		return -1
	}
	return min(len(a), len(b))
}
