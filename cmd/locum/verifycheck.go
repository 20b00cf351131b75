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
		&cli.StringFlag{Name: "lines", Usage: "the span: " + scope.LinesForm + "; default the whole file"},
		&cli.StringFlag{Name: "symbol", Usage: "instead of --lines, the span is this Go declaration with its doc comment"},
		&cli.StringFlag{Name: "verify", Usage: "the bash command a transform of the span would run (required)"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
	}
	flags = append(flags, settingFlags(verifycheck.Mode.Name)...)
	return &cli.Command{
		Name:  "verify-check",
		Usage: "whether a verify can fail on a span, before a transform of it: no model, no edit",
		Description: "Copies the tree (without its git directories) to a scratch directory, runs the verify there on\n" +
			"the span as it is (it must pass), then on each of a few small changes to the span, the\n" +
			"mutants a transform's kept edit is checked against (--mutants, 4 by default):\n" +
			indent(mutate.Describe(nil), "  ") + "\n" +
			"A verify worth handing a transform rejects them. The receipt says verify_strength=K/N.\n\n" +
			"Exit 0 when the verify rejected at least one; 1 when it rejected none (it cannot tell a\n" +
			"wrong edit of the span from a right one: choose a verify that exercises it) or could not be\n" +
			"checked (it fails on the span as it is, say); 2 could not run. The person's tree is never\n" +
			"written.",
		UsageText:    `locum verify-check --file PATH [--lines A-B | --symbol NAME] --verify CMD [--mutants 4] [--json]`,
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
