package packs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A workflow's verify is a shell template, and the values it is filled with are of two kinds. A
// parameter is the operator's own text (or the pack's default for it), as a verify the operator
// could give itself, and goes in as written. Every other value (an item's file, symbol or line,
// an earlier step's output) may have been written by a model, and goes in as one single-quoted
// shell word: bash reads it back as exactly the bytes it holds, within one argument, wherever
// the template puts it among a command's arguments, as a word of its own or joined only to
// plain text (--file={{file}}), and nowhere else. Inside double quotes, a here-document,
// backquotes or a comment the single quotes mean nothing or end the context early, and in a
// redirection, an assignment, arithmetic or the command's own name the word is read as more
// than an argument. So each such placeholder's place is found by parsing the template with
// mvdan.cc/sh's bash parser (the one shfmt uses), not by scanning quotes by hand, and a
// template that puts one anywhere else is refused: when its pack loads, and again before it
// runs with the parameters' real values in place, since a parameter is shell text that can move
// what follows it.
//
// Passing every such value through the environment instead ("$LOCUM_ITEM") was the other way:
// it would keep model text out of the shell's source, but not out of its reach, since bash
// evaluates a variable's text as code in arithmetic and `[[ -eq ]]`, and in a here-document the
// quotes would be printed; a template would still need this parse to say where "$VAR" means
// the value, and the verify runner would need a way to pass the variables into the sandbox. The
// parse alone keeps one rule that can be checked, and said, in one line: a value is (part of)
// one argument of a command.

// CommandError is a verify template with a placeholder where its value would not be one
// argument, byte for byte, of the command it is given to.
type CommandError struct {
	Template string
	// Name is the placeholder's name, "" when the template as a whole cannot be read.
	Name string
	// Where says where it stands instead: "inside double quotes", "in a here-document".
	Where string
}

func (e *CommandError) Error() string {
	if e.Name == "" {
		return fmt.Sprintf("%q is not a command bash can read (%s)", e.Template, e.Where)
	}
	return fmt.Sprintf("{{%s}} is %s: a value other than a parameter goes in as one quoted word, so it must be a command's argument, alone or joined to plain text (grep -q x {{%s}})", e.Name, e.Where, e.Name)
}

// evaluating are bash's builtins that may read an argument as code, a command or a variable's
// name (whose subscript bash evaluates: read 'a[$(cmd)]' runs cmd), so no value goes to them.
// printf and test read a name only after -v, which valueArgOK checks.
var evaluating = map[string]bool{
	".": true, "alias": true, "bind": true, "builtin": true, "command": true, "compgen": true,
	"complete": true, "declare": true, "enable": true, "eval": true, "exec": true, "export": true,
	"fc": true, "getopts": true, "hash": true, "let": true, "local": true, "mapfile": true,
	"read": true, "readarray": true, "readonly": true, "source": true, "trap": true,
	"typeset": true, "unset": true, "wait": true,
}

// CheckCommand checks that every placeholder of a verify template asWritten does not name
// stands as one argument of a command, given the values of those it names (which go in as
// written, so they are part of the shell text checked).
func CheckCommand(template string, vars map[string]string, asWritten func(name string) bool) error {
	matches := templateRef.FindAllStringSubmatchIndex(template, -1)
	var names []string
	for _, m := range matches {
		if name := template[m[2]:m[3]]; !asWritten(name) {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	// Each value goes in as a bare word of letters and digits, found nowhere else in the text:
	// it stands where the quoted word will, and bash reads neither as more than one word there.
	text := template
	for _, v := range vars {
		text += "\x00" + v
	}
	prefix := "locumslot"
	for strings.Contains(text, prefix) {
		prefix += "x"
	}
	var b strings.Builder
	var slots []slot
	last := 0
	for _, m := range matches {
		b.WriteString(template[last:m[0]])
		last = m[1]
		name := template[m[2]:m[3]]
		if asWritten(name) {
			b.WriteString(vars[name])
			continue
		}
		s := slot{word: prefix + strconv.Itoa(len(slots)) + "z", name: name}
		slots = append(slots, s)
		b.WriteString(s.word)
	}
	b.WriteString(template[last:])
	return checkSlots(template, b.String(), prefix, slots)
}

// slot is the word a checked placeholder is replaced with for the parse.
type slot struct{ word, name string }

// checkSlots parses src, the template with each checked placeholder replaced by its slot word
// (each begins with prefix), and finds each slot's one place.
func checkSlots(template, src, prefix string, slots []slot) error {
	// A carriage return ends a here-document's delimiter line for the parser but not for bash
	// (EOF\r is not EOF), so the two would read different commands; no other control character
	// but a tab or a line break belongs in a command either.
	if i := strings.IndexFunc(src, func(r rune) bool { return (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f }); i >= 0 {
		return &CommandError{Template: template, Where: fmt.Sprintf("it holds the control character %q, which bash and locum's check of it may read differently", src[i:i+1])}
	}
	f, err := syntax.NewParser(syntax.KeepComments(true), syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		var perr syntax.ParseError
		where := err.Error()
		if errors.As(err, &perr) {
			where = perr.Text
		}
		return &CommandError{Template: template, Where: where}
	}
	found := map[string]string{}
	var stack []syntax.Node
	see := func(slot, at string) {
		if _, twice := found[slot]; twice {
			at = "where the parser reads it twice"
		}
		found[slot] = at
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return true
		}
		stack = append(stack, n)
		var text string
		switch n := n.(type) {
		case *syntax.Lit:
			text = n.Value
		case *syntax.SglQuoted:
			text = n.Value
		case *syntax.Comment:
			text = n.Text
		default:
			return true
		}
		for _, s := range slots {
			if strings.Contains(text, s.word) {
				see(s.word, place(stack, s.word, prefix))
			}
		}
		return true
	})
	for _, s := range slots {
		where, ok := found[s.word]
		switch {
		case !ok:
			return &CommandError{Template: template, Name: s.name, Where: "where bash would not read it as a word"}
		case where != "":
			return &CommandError{Template: template, Name: s.name, Where: where}
		}
	}
	return nil
}

// place says where the node on top of stack, which holds slot, stands: "" for one argument of a
// command, else the outermost reason it is not one.
func place(stack []syntax.Node, slot, prefix string) string {
	if _, ok := stack[len(stack)-1].(*syntax.Comment); ok {
		// A statement's trailing comment is walked after the statement, under its parent.
		return "in a comment"
	}
	for i := 1; i < len(stack); i++ {
		parent, child := stack[i-1], stack[i]
		switch p := parent.(type) {
		case *syntax.File, *syntax.BinaryCmd, *syntax.Block, *syntax.Subshell, *syntax.IfClause,
			*syntax.WhileClause, *syntax.TimeClause, *syntax.ProcSubst:
			if _, ok := child.(*syntax.Stmt); !ok {
				return where(child)
			}
		case *syntax.FuncDecl, *syntax.CoprocClause:
			if _, ok := child.(*syntax.Stmt); !ok {
				return "a function's or a coprocess's name"
			}
		case *syntax.ForClause, *syntax.CaseItem:
			if _, ok := child.(*syntax.Stmt); !ok {
				return "in a loop's or a case's words"
			}
		case *syntax.CaseClause:
			if _, ok := child.(*syntax.CaseItem); !ok {
				return "in a loop's or a case's words"
			}
		case *syntax.CmdSubst:
			if p.Backquotes {
				return "inside backquotes"
			}
			if p.TempFile || p.ReplyVar {
				return where(p)
			}
			if _, ok := child.(*syntax.Stmt); !ok {
				return where(child)
			}
		case *syntax.Stmt:
			if child != p.Cmd {
				return where(child)
			}
		case *syntax.CallExpr:
			i := argIndex(p, child)
			switch {
			case i < 0:
				return where(child)
			case i == 0:
				return "the command's name"
			}
			if w := valueArgOK(p, i, prefix); w != "" {
				return w
			}
		case *syntax.Word:
			switch c := child.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
			case *syntax.Lit:
				if len(p.Parts) != 1 || !plainAround(c.Value, prefix) {
					return "joined to more than plain text in its word"
				}
			default:
				return where(child)
			}
		default:
			return where(parent)
		}
	}
	return ""
}

// plainAround says lit, a word's one literal, holds nothing but slots and plain text: letters,
// digits and "-_=.,:/+@%", none of which bash expands, so the word is that text and the values,
// one argument (--file={{file}}, todo-{{symbol}}). A glob, a brace, a tilde or a backslash
// beside a value could make it more words, or other bytes.
func plainAround(lit, prefix string) bool {
	for lit != "" {
		if rest, ok := strings.CutPrefix(lit, prefix); ok {
			digits := strings.TrimLeft(rest, "0123456789")
			if len(digits) == len(rest) || !strings.HasPrefix(digits, "z") {
				return false
			}
			lit = digits[1:]
			continue
		}
		c := lit[0]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_=.,:/+@%", c) >= 0) {
			return false
		}
		lit = lit[1:]
	}
	return true
}

func argIndex(call *syntax.CallExpr, child syntax.Node) int {
	for i, a := range call.Args {
		if a == child {
			return i
		}
	}
	return -1
}

// valueArgOK says why argument i of call may not be a value, or "" when it may. A word that is
// itself a value (holds prefix) could be anything.
func valueArgOK(call *syntax.CallExpr, i int, prefix string) string {
	static := func(w *syntax.Word) (string, bool) {
		s, ok := staticWord(w)
		return s, ok && !strings.Contains(s, prefix)
	}
	name, ok := static(call.Args[0])
	if !ok {
		return "an argument of a command whose name is not written out, which could read it as code"
	}
	if evaluating[name] {
		return "an argument of " + name + ", which may read it as code or a variable's name"
	}
	switch name {
	case "printf":
		// printf -v NAME (or -vNAME) assigns to NAME; the format comes first after the options.
		for j := 1; j < i; j++ {
			a, ok := static(call.Args[j])
			switch {
			case !ok:
				return "an argument of printf after one that could be -v"
			case a == "--":
			case a == "-v":
				j++
			case strings.HasPrefix(a, "-v"):
			default:
				return "" // the format is before it
			}
		}
		return "printf's format or the name of its -v, which may be read as a variable's name"
	case "test", "[":
		if a, ok := static(call.Args[i-1]); !ok || a == "-v" || a == "-R" {
			return "an argument of " + name + " after one that is or could be -v, which reads it as a variable's name"
		}
	}
	return ""
}

// staticWord is w's value when it holds no expansion: literal text and quotes only.
func staticWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(unescape(p.Value, ""))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescape(l.Value, "$`\"\\\n"))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape removes bash's backslashes from an unquoted literal (only "" given) or a
// double-quoted one (only before the bytes in special): a backslash and newline are nothing.
func unescape(s, special string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// where names a node that is no command's argument.
func where(n syntax.Node) string {
	switch n := n.(type) {
	case *syntax.Comment:
		return "in a comment"
	case *syntax.SglQuoted:
		return "inside single quotes"
	case *syntax.DblQuoted:
		return "inside double quotes"
	case *syntax.Redirect:
		if n.Hdoc != nil {
			return "in a here-document or its redirection"
		}
		return "in a redirection"
	case *syntax.Assign, *syntax.ArrayExpr, *syntax.ArrayElem:
		return "in an assignment"
	case *syntax.ParamExp:
		return "inside ${...}"
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop:
		return "in arithmetic"
	case *syntax.TestClause:
		return "inside [[ ]]"
	case *syntax.DeclClause:
		return "an argument of " + n.Variant.Value + ", which may read it as code or a variable's name"
	case *syntax.CmdSubst:
		return "inside ${ ...; }"
	case *syntax.ExtGlob:
		return "in a glob pattern"
	}
	return fmt.Sprintf("where bash would not read it as one argument (%T)", n)
}
