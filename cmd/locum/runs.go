package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) runsCommand() *cli.Command {
	return &cli.Command{
		Name:     "runs",
		Category: groupReview,
		Usage:    "read back the run journal",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum runs list --since 24h",
			"locum runs show 20261204T201530Z-5c1f0e",
			"locum runs analyze --all --since 7d",
		}}),
		UsageText: "locum runs list | show RUN_ID [--diff] | analyze RUN_ID|--all | diff A B | prune | accept RUN_ID | reject RUN_ID | mark RUN_ID --handoff used|unused",
		Description: "Each run appends one JSON line per event to its journal under the repository's git\n" +
			"directory (git rev-parse --git-path locum/runs), or the user's state directory outside a repository.",
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unknown runs command %q", cmd.Args().First())
			}
			return usagef(cmd, "missing runs command (list, show, analyze, diff, prune, accept, reject or mark)")
		},
		Commands: append([]*cli.Command{
			{
				Name:      "list",
				Usage:     "list the runs, newest first",
				UsageText: "locum runs list [--mode MODE] [--since 24h|7d|DATE] [--failed] [--json]",
				Metadata: helpOf(commandHelp{examples: []string{
					"locum runs list",
					"locum runs list --mode transform --since 7d --failed",
					"locum runs list --since 2026-11-30 --json",
				}}),
				Flags:        runsListFlags(),
				OnUsageError: onUsageError,
				Action:       e.runsList,
			},
			{
				Name:      "show",
				Usage:     "show one run's events (RUN_ID, or a unique prefix of it)",
				UsageText: "locum runs show RUN_ID [--diff]",
				Metadata: helpOf(commandHelp{
					examples: []string{
						"locum runs show 20261204T201530Z-5c1f0e",
						"locum runs show 20261204T2015 --diff",
					},
					exits: exitWords{red: "with --diff, a run whose branch is not there to read (it did not complete, or was accepted or rejected)"},
				}),
				Flags:        []cli.Flag{&cli.BoolFlag{Name: "diff", Usage: "show an agent run's branch as a diff from where it started"}},
				OnUsageError: onUsageError,
				Action: func(ctx context.Context, cmd *cli.Command) error {
					if cmd.Bool("diff") {
						return e.agentDiff(ctx, cmd)
					}
					if cmd.NArg() != 1 {
						return usagef(cmd, "want exactly one RUN_ID, got %d arguments", cmd.NArg())
					}
					jobs, err := e.jobs(nil)
					if err != nil {
						return err
					}
					j, err := jobs.RunJournal(cmd.Args().First())
					if err != nil {
						return withCode(exitCouldNot, fmt.Errorf("locum runs show: %w", err))
					}
					fmt.Fprintf(e.stdout, "journal %s\n", untrusted.Escape(j.Path))
					printJournalNotes(e.stdout, j)
					for _, ev := range j.Events {
						fmt.Fprintln(e.stdout, engine.EventLine(ev))
					}
					return nil
				},
			},
			e.runsAcceptCommand(),
			e.runsRejectCommand(),
			e.runsMarkCommand(),
		}, e.analyzeCommands()...),
	}
}

// journalKey is the operator's key to check a journal's seal with; nil where there is none, and
// then no journal is sealed.
func (e *env) journalKey() []byte {
	key, _ := engine.JournalKey(e.lookup, false)
	return key
}

// sealKey is the operator's key to seal a run's journal with, made on first use, as the job
// layer gives every run it starts.
func (e *env) sealKey() ([]byte, error) { return engine.JournalKey(e.lookup, true) }

// printJournalNotes says, before a journal's events, what a reader should know of them: that
// locum cannot show it wrote the journal, or that not every event is shown.
func printJournalNotes(w io.Writer, j engine.RunJournal) {
	if !j.Sealed {
		fmt.Fprintf(w, "unsealed: %s\n", engine.Unsealed)
	}
	if j.Cut != "" {
		fmt.Fprintf(w, "cut: %s\n", j.Cut)
	}
}

func (e *env) runsDir() (string, error) {
	root, err := e.root()
	if err != nil {
		return "", err
	}
	return engine.RunsDir(root)
}
