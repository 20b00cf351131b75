package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/mutate"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/verifycheck"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) verifyCheckCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Usage: "the file whose span the verify should judge (required)"},
		&cli.StringFlag{Name: "lines", Usage: "the span: " + scope.LinesForm, DefaultText: "whole file"},
		&cli.StringFlag{Name: "symbol", Usage: "instead of --lines, the span is this declaration with its decorators and doc comment (locum symbols lists them)"},
		&cli.StringFlag{Name: "verify", Usage: "the bash command a transform of the span would run (required)"},
	}
	flags = append(flags, settingFlags(verifycheck.Mode.Name)...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "verify-check",
		Category: groupInspect,
		Usage:    "whether a verify can fail on a span, before a transform of it: no model, no edit",
		Description: "Copies the tree (without its git directories) to a scratch directory, runs the verify there on\n" +
			"the span as it is (it must pass), then on each of a few small changes to the span, the\n" +
			"mutants a transform's kept edit is checked against (at most --mutants of them):\n" +
			indent(mutate.Describe(nil), "  ") + "\n" +
			"A verify worth handing a transform rejects them. The receipt says verify_strength=K/N.\n" +
			"The person's tree is never written.",
		UsageText: `locum verify-check --file PATH [--lines A-B | --symbol NAME] --verify CMD [--mutants 4] [--json]`,
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum verify-check --file pkg/calc/calc.go --symbol Clamp --verify "go test ./pkg/calc"`,
				`locum verify-check --file pkg/calc/calc.go --lines 10-24 --verify "go test -run TestClamp ./pkg/calc" --mutants 8 --json`,
			},
			exits: exitWords{
				done: "the verify rejected at least one change",
				red: "it rejected none (it cannot tell a wrong edit of the span from a right one: choose a verify " +
					"that exercises it), or the span could not be checked (the verify fails on it as it is, say)",
			},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action: e.machineAction(func(ctx context.Context, cmd *cli.Command) error {
			if cmd.String("file") == "" || cmd.String("verify") == "" {
				return usagef(cmd, "--file and --verify are required")
			}
			if cmd.NArg() > 0 {
				return usagef(cmd, "verify-check takes no argument, got %q", cmd.Args().First())
			}
			return e.verifyCheck(ctx, cmd)
		}),
	}
}

func (e *env) verifyCheck(ctx context.Context, cmd *cli.Command) error {
	p, err := e.prepare(ctx, cmd, verifycheck.Mode)
	if err != nil {
		return err
	}
	j := &verifycheck.Job{File: cmd.String("file"), Lines: cmd.String("lines"), Symbol: cmd.String("symbol"), Verify: cmd.String("verify")}
	survivors := func(_, stderr io.Writer, _ *engine.Result) {
		if j.Strength == nil || cmd.Bool("json") {
			return
		}
		for _, s := range j.Strength.Survivors {
			fmt.Fprintf(stderr, "passed: %s\n", untrusted.Escape(s))
		}
	}
	res, err := e.runJob(ctx, cmd, p, j, survivors)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, survivors)
}

// indent puts prefix before each line of s.
func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = prefix + l
	}
	return strings.Join(lines, "\n")
}
