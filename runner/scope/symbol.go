package scope

import (
	"errors"
	"strings"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/symbols"
	"github.com/locumdev/locum/untrusted"
)

// SymbolRange finds the lines of the declaration name in src (symbols.Find): in Go a function,
// a method written Type.Method, a type, or the const or var block that declares name; in
// Python, TypeScript, JavaScript and Rust a function, a method written Class.method (Type.method
// in Rust), a class, struct, trait or other type, or a top-level constant; each with its
// decorators and doc comment. A model edits best when it sees one whole unit, and the user names
// it rather than counting lines.
func SymbolRange(display string, src []byte, name string) (LineRange, error) {
	lang := symbols.LanguageOf(display)
	if lang == nil {
		return LineRange{}, engine.BadInputf("{symbol} works on %s files; %s is none of them: give its span with {lines} A-B", symbols.Known, untrusted.Escape(display))
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return LineRange{}, engine.BadInputf("{symbol} is empty: name a %s (a method is %s)", lang.Kinds, lang.Method)
	}
	d, err := symbols.Find(display, src, name)
	if err != nil {
		var nocgo *symbols.NoCgoError
		if errors.As(err, &nocgo) {
			return LineRange{}, engine.BadInputf("this locum was built without cgo: {symbol} for %s needs a build with a C compiler; use {lines}", nocgo.Ext)
		}
		var notFound *symbols.NotFoundError
		if errors.As(err, &notFound) {
			return LineRange{}, engine.BadInputf("{symbol} %s: %s %s", untrusted.Escape(name), untrusted.Escape(display), untrusted.Escape(err.Error()))
		}
		return LineRange{}, engine.BadInputf("{symbol} %s: %s; give the span with {lines} A-B", untrusted.Escape(name), SymbolError(display, err))
	}
	return LineRange{Start: d.Start, End: d.End}, nil
}

// SymbolError words an error of listing or finding the declarations of the file display, for a
// message that names the file: "calc.py does not parse as Python (line 3:1: ...)".
func SymbolError(display string, err error) string {
	var nocgo *symbols.NoCgoError
	if errors.As(err, &nocgo) {
		return untrusted.Escape(display) + ": " + err.Error()
	}
	var unknown *symbols.LanguageError
	if errors.As(err, &unknown) {
		return untrusted.Escape(err.Error())
	}
	return untrusted.Escape(display + " " + err.Error())
}

// Symbols lists the declarations of src that SymbolRange finds, in source order
// (symbols.List); its error is a *engine.BadInputError naming the file.
func Symbols(display string, src []byte) ([]symbols.Decl, error) {
	decls, err := symbols.List(display, src)
	if err != nil {
		return nil, engine.BadInputf("%s", SymbolError(display, err))
	}
	return decls, nil
}
