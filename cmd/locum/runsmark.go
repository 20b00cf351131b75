package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// runsMarkCommand is runs mark: a person's or the host's word on whether it used a red run's
// handoff, which the ledger and runs analyze count over the measure.
func (e *env) runsMarkCommand() *cli.Command {
	return &cli.Command{
		Name:      "mark",
		Usage:     "say whether you used a red run's handoff; the ledger counts your word over its measure",
		UsageText: "locum runs mark RUN_ID --handoff used|unused",
		Metadata: helpOf(commandHelp{
			examples: []string{"locum runs mark 20261204T201530Z-5c1f0e --handoff used", "locum runs mark 20261204T2015 --handoff unused"},
			exits: exitWords{done: "marked",
				red: "refused: the run has no handoff the ledger counts (it did not end red with one, is a workflow's item, or its journal is not sealed with your key)"},
		}),
		Flags:        []cli.Flag{&cli.StringFlag{Name: "handoff", Usage: "used or unused: whether your own edit after the red run started from its handoff"}},
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() != 1 {
				return usagef(cmd, "want exactly one RUN_ID, got %d arguments", cmd.NArg())
			}
			use := cmd.String("handoff")
			if use != engine.HandoffUsed && use != engine.HandoffUnused {
				return usagef(cmd, "--handoff: want used or unused, got %q", use)
			}
			dir, err := e.runsDir()
			if err != nil {
				return withCode(exitCouldNot, err)
			}
			key, err := e.sealKey()
			if err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum runs mark: no key to seal the mark with: %w", err))
			}
			run, err := engine.MarkHandoff(dir, cmd.Args().First(), use, key)
			var none *engine.NoHandoffError
			switch {
			case errors.As(err, &none):
				return withCode(exitRed, fmt.Errorf("locum runs mark: %w", err))
			case err != nil:
				return withCode(exitCouldNot, fmt.Errorf("locum runs mark: %s", untrusted.Escape(err.Error())))
			}
			fmt.Fprintf(e.stdout, "marked the handoff of %s %s\n", untrusted.Escape(run), use)
			return nil
		},
	}
}
