package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/evidence"
	"github.com/locumdev/locum/runner/handoff"
)

// handoffCommand is the handoff mode's command: a log compressed into a handoff. It is not the
// handoff a red run of another mode prints on stderr (handoff.go).
func (e *env) handoffCommand() *cli.Command {
	// Own flags first, in the order help lists them: --role, a setting, stands beside --model.
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Usage: "the log or text file to hand over (required)"},
		&cli.IntFlag{Name: "tail", Usage: "hand over the file's last N lines alone, for a file over the input budget", DefaultText: "whole file"},
		&cli.StringFlag{Name: "model", Usage: "the model to use: an operator's explicit choice (routing=operator)"},
	}
	flags = append(flags, settingFlags(handoff.Mode.Name)...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print every item with its verdict as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "handoff",
		Category: groupDelegate,
		Usage:    "a log or long text compressed into a handoff whose every item is checked against its lines",
		Description: "The model gets the file's lines (or its last --tail lines) numbered as the file numbers them,\n" +
			"and returns items in six sections: work (what the work is), done, open (what failed or is\n" +
			"still open), files, commands and next (what to do next), each with the lines it rests on and\n" +
			"a quote of them. The evidence gate, in code, marks an item unsupported when its quote is not\n" +
			"in the lines, its words are not in the lines around it, or a number or name it states is not\n" +
			"there; the model cannot change a verdict. Supported items print as `open L40-44 text \"quote\"`\n" +
			"in the order of their sections, then the sections no item speaks for, then `unsupported: N`.\n" +
			"A file whose lines are over the input budget is refused before any request, with the --tail\n" +
			"that fits.",
		UsageText: `locum handoff --file PATH [--tail N] [--max-words 120] [--role prose | --model ID] [--json] [FOCUS]`,
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum handoff --file build.log`,
				`locum handoff --file ci/test.log --tail 400 "why the test job failed"`,
				`locum handoff --file notes/session.md --max-words 80 --json`,
			},
			exits: exitWords{done: "at least one item is supported", red: "none is (do not trust the handoff), or refused before any request"},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action: e.machineAction(func(ctx context.Context, cmd *cli.Command) error {
			if cmd.String("file") == "" {
				return usagef(cmd, "--file is required")
			}
			if cmd.IsSet("tail") && cmd.Int("tail") < 1 {
				return usagef(cmd, "--tail %d: want a number of lines from 1", cmd.Int("tail"))
			}
			if cmd.NArg() > 1 {
				return usagef(cmd, "want at most one FOCUS argument, got %d (quote it)", cmd.NArg())
			}
			return e.handoff(ctx, cmd)
		}),
	}
}

func (e *env) handoff(ctx context.Context, cmd *cli.Command) error {
	p, err := e.prepare(ctx, cmd, handoff.Mode)
	if err != nil {
		return err
	}
	j := &handoff.Job{File: cmd.String("file"), Tail: int(cmd.Int("tail")), Focus: cmd.Args().First()}
	items := func(stdout, _ io.Writer, _ *engine.Result) {
		if !cmd.Bool("json") && j.Items != nil {
			fmt.Fprint(stdout, evidence.HandoffLines(j.Items))
		}
	}
	res, err := e.runJob(ctx, cmd, p, j, items)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, items)
}
