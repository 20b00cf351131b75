package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/symbols"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) symbolsCommand() *cli.Command {
	// A file is read under the input budget a transform's prompt holding it would have.
	var budget []packs.FlagSpec
	for _, f := range packs.SettingFlags(job.SymbolsMode) {
		if f.Key == packs.MaxInputBytes.String() {
			budget = append(budget, f)
		}
	}
	defaults, err := packs.BuiltinDefaults(job.SymbolsMode)
	if err != nil {
		// The default pack is embedded and its tests resolve every mode's settings from it.
		panic(fmt.Sprintf("locum: %v", err))
	}
	flags := append([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout (spec/symbols.schema.json; the MCP symbols tool returns the same)"}},
		declareFlags(budget, defaults)...)
	return &cli.Command{
		Name:     "symbols",
		Category: groupInspect,
		Usage:    "list the declarations of files with their lines, as --symbol and a workflow take them",
		Description: "Each file's functions, methods (Type.Method, Class.method), types, classes, traits and top-level\n" +
			"constants, one a line: FILE:START-END KIND NAME. NAME is what --symbol takes; START-END is the span\n" +
			"it gives, with its decorators and doc comment. " + symbols.Known + " files are read; Go with\n" +
			"go/parser, the others with tree-sitter, which a build without cgo lacks. A file is read as a\n" +
			"prompt holding it would be: inside the repository, under --max-input-bytes; one that does not\n" +
			"parse is refused with its first error, and the other files are listed still.",
		UsageText: "locum symbols [--json] FILE...",
		Metadata: helpOf(commandHelp{
			examples: []string{
				"locum symbols pkg/calc/calc.go",
				"locum symbols --json src/app/models.py src/app/views.py",
			},
			exits: exitWords{
				done:     "every file's declarations are listed",
				red:      "a file is over the input budget",
				couldNot: "a file that is missing, of another language, or does not parse",
			},
		}),
		Flags:        flags,
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() == 0 {
				return usagef(cmd, "name one or more files")
			}
			return e.symbols(cmd)
		},
	}
}

func (e *env) symbols(cmd *cli.Command) error {
	jobs, err := e.jobs(setFlags(cmd, job.SymbolsMode))
	if err != nil {
		return err
	}
	budget, err := jobs.SymbolsBudget(nil)
	var unread *job.WorkspaceError
	switch {
	case errors.As(err, &unread):
		return withCode(exitCouldNot, err)
	case err != nil:
		return withCode(exitCouldNot, fmt.Errorf("locum %s: %w", cmd.Name, err))
	}
	wd, err := e.getwd()
	if err != nil {
		return err
	}
	rep := scope.ReadSymbols(wd, jobs.Root(), cmd.Args().Slice(), budget, rails.FlagName)
	if cmd.Bool("json") {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else {
		for _, f := range rep.Files {
			for _, d := range f.Symbols {
				fmt.Fprintf(e.stdout, "%s:%s %s %s\n", untrusted.Escape(f.File), d.Lines(), d.Kind, untrusted.Escape(d.Name))
			}
		}
	}
	for _, f := range rep.Files {
		if f.Error != nil {
			// Each message names its file, escaped.
			fmt.Fprintf(e.stderr, "locum symbols: %s\n", f.Error.Message)
		}
	}
	code := exitOK
	switch {
	case rep.Failed():
		code = exitCouldNot
	case rep.Refused():
		code = exitRed
	}
	if code != exitOK {
		n := 0
		for _, f := range rep.Files {
			if f.Error != nil {
				n++
			}
		}
		return withCode(code, fmt.Errorf("locum symbols: %d of %d files not listed", n, len(rep.Files)))
	}
	return nil
}
