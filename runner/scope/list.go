package scope

import (
	"errors"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/symbols"
	"github.com/locumdev/locum/untrusted"
)

// SymbolsReport is the declarations of the files a caller named, as `locum symbols --json`
// prints them and the MCP tool symbols returns them (spec/symbols.schema.json).
type SymbolsReport struct {
	Files []FileSymbols `json:"files"`
}

// FileSymbols is one file's declarations, or why they are not listed.
type FileSymbols struct {
	// File is the file from the repository root, with / between folders.
	File     string `json:"file"`
	Language string `json:"language,omitempty"`
	// Symbols are what --symbol and a workflow's for_each symbols take, in file order.
	Symbols []symbols.Decl `json:"symbols"`
	Error   *SymbolsError  `json:"error,omitempty"`
}

// SymbolsError is why a file's declarations are not listed.
type SymbolsError struct {
	// Kind is over_budget (the file is over the input budget), unreadable (missing, not a
	// regular text file, or outside the repository), language (not a language locum reads),
	// no_cgo (a build without cgo), syntax (the file does not parse) or too_large (over the
	// size a parse reads).
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// Refused says whether any file was refused for its size against the input budget.
func (r *SymbolsReport) Refused() bool {
	return r.anyKind(func(k string) bool { return k == "over_budget" })
}

// Failed says whether any file could not be read or parsed.
func (r *SymbolsReport) Failed() bool {
	return r.anyKind(func(k string) bool { return k != "over_budget" })
}

func (r *SymbolsReport) anyKind(match func(string) bool) bool {
	for _, f := range r.Files {
		if f.Error != nil && match(f.Error.Kind) {
			return true
		}
	}
	return false
}

// ReadSymbols lists the declarations of each file, named from cwd: each a regular text file
// inside the repository at root after symbolic links, read under budget as a prompt holding it
// would be. A file that cannot be listed says why in its Error, with settings named by name (the
// command line's flags, a tool call's arguments); the others are listed still.
func ReadSymbols(cwd, root string, files []string, budget int64, name func(setting string) string) *SymbolsReport {
	rep := &SymbolsReport{Files: make([]FileSymbols, 0, len(files))}
	for _, file := range files {
		rep.Files = append(rep.Files, readSymbols(cwd, root, file, budget, name))
	}
	return rep
}

func readSymbols(cwd, root, file string, budget int64, name func(string) string) FileSymbols {
	out := FileSymbols{File: file, Symbols: []symbols.Decl{}}
	fail := func(kind, msg string) FileSymbols {
		out.Error = &SymbolsError{Kind: kind, Message: msg}
		return out
	}
	path, display, err := resolveInRoot(cwd, root, file)
	if err != nil {
		var bad *engine.BadInputError
		if errors.As(err, &bad) {
			return fail("unreadable", bad.Words(name))
		}
		return fail("unreadable", err.Error())
	}
	out.File = display
	if lang := symbols.LanguageOf(display); lang != nil {
		out.Language = lang.Name
	}
	data, err := rails.ReadTextFile(path, budget)
	if err != nil {
		var be *rails.BudgetError
		if errors.As(err, &be) {
			be.What, be.Remedy = untrusted.Escape(display), "list a smaller file"
			return fail("over_budget", be.Words(name))
		}
		var fe *rails.FileError
		if errors.As(err, &fe) {
			fe.Path = display
		}
		return fail("unreadable", err.Error())
	}
	decls, err := symbols.List(display, data)
	if err != nil {
		kind := "syntax"
		var (
			unknown *symbols.LanguageError
			nocgo   *symbols.NoCgoError
			large   *symbols.TooLargeError
		)
		switch {
		case errors.As(err, &unknown):
			kind = "language"
		case errors.As(err, &nocgo):
			kind = "no_cgo"
		case errors.As(err, &large):
			kind = "too_large"
		}
		return fail(kind, SymbolError(display, err))
	}
	if decls != nil {
		out.Symbols = decls
	}
	return out
}
