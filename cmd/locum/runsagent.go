package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/review"
	"github.com/locumdev/locum/untrusted"
)

// The review of a run that left a branch (an agent or workflow run): runs show RUN --diff, runs accept RUN, runs reject RUN.

func (e *env) review(ctx context.Context, cmd *cli.Command) (*review.Review, error) {
	if cmd.NArg() != 1 {
		return nil, usagef(cmd, "want exactly one RUN_ID, got %d arguments", cmd.NArg())
	}
	root, err := e.root()
	if err != nil {
		return nil, err
	}
	rv, err := review.Find(ctx, root, cmd.Args().First())
	if err != nil {
		return nil, e.reviewError(cmd, err)
	}
	return rv, nil
}

// reviewError: a run that cannot be reviewed now (no branch, not completed), a dirty tree, a
// conflict, a branch moved since the run, or a repository git is not run in (its config, or a
// partial clone that lacks what the merge needs) is a refusal (exit 1); a name that is no agent
// run, or git failing, is could-not-run (2).
func (e *env) reviewError(cmd *cli.Command, err error) error {
	var na *review.NotReviewableError
	var dirty *review.DirtyTreeError
	var conflict *review.ConflictError
	var moved *review.MovedBranchError
	var gitConf *gitsafe.ConfigError
	var missing *gitsafe.MissingObjectsError
	code := exitCouldNot
	if errors.As(err, &na) || errors.As(err, &dirty) || errors.As(err, &conflict) || errors.As(err, &moved) ||
		errors.As(err, &gitConf) || errors.As(err, &missing) {
		code = exitRed
	}
	if na != nil && na.NotARun {
		code = exitCouldNot // a name that is no agent run is a bad argument
	}
	return withCode(code, fmt.Errorf("locum runs %s: %s", cmd.Name, untrusted.EscapeLines(err.Error())))
}

// diffBytes bounds the diff runs show --diff prints: a branch's files are the repository's, of
// any size.
const diffBytes = 16 << 20

func (e *env) agentDiff(ctx context.Context, cmd *cli.Command) error {
	rv, err := e.review(ctx, cmd)
	if err != nil {
		return err
	}
	diff, err := rv.Diff(ctx, diffBytes)
	if err != nil {
		return e.reviewError(cmd, err)
	}
	fmt.Fprintf(e.stdout, "branch %s\n", rv.Branch)
	fmt.Fprint(e.stdout, untrusted.EscapeLines(diff.Text))
	if diff.Cut() {
		fmt.Fprintf(e.stderr, "locum runs show: the diff is %d bytes; only its first %d are shown\n", diff.Size, len(diff.Text))
	}
	return nil
}

func (e *env) runsAcceptCommand() *cli.Command {
	return &cli.Command{
		Name:      "accept",
		Usage:     "merge a completed agent run's branch into the current branch (fast-forward when it can); refuses a dirty tree",
		UsageText: "locum runs accept RUN_ID",
		Metadata: helpOf(commandHelp{
			examples: []string{"locum runs accept 20261204T201530Z-5c1f0e", "locum runs accept 20261204T2015"},
			exits: exitWords{done: "merged, and the branch deleted",
				red: "refused: a run that did not complete, a working tree with uncommitted changes, a conflict, a branch moved since the run"},
		}),
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			rv, err := e.review(ctx, cmd)
			if err != nil {
				return err
			}
			how, err := rv.Accept(ctx)
			if err != nil {
				return e.reviewError(cmd, err)
			}
			fmt.Fprintf(e.stdout, "accepted %s (%s); the branch is deleted\n", rv.Branch, how)
			e.recordVerdict(rv.RunID, "accepted")
			return nil
		},
	}
}

func (e *env) runsRejectCommand() *cli.Command {
	return &cli.Command{
		Name:      "reject",
		Usage:     "delete an agent run's branch and its worktree",
		UsageText: "locum runs reject RUN_ID",
		Metadata: helpOf(commandHelp{
			examples: []string{"locum runs reject 20261204T201530Z-5c1f0e", "locum runs reject 20261204T2015"},
			exits:    exitWords{done: "the branch and its worktree deleted", red: "refused: a run still going, or a branch that is not there"},
		}),
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			rv, err := e.review(ctx, cmd)
			if err != nil {
				return err
			}
			if err := rv.Reject(ctx); err != nil {
				return e.reviewError(cmd, err)
			}
			fmt.Fprintf(e.stdout, "rejected %s: branch and worktree deleted\n", rv.Branch)
			e.recordVerdict(rv.RunID, "rejected")
			return nil
		},
	}
}

// recordVerdict appends the person's verdict on a run to its journal, for the ledger's right
// rate, sealed as the journal is; a journal that cannot be written costs the ledger that
// verdict, with a warning.
func (e *env) recordVerdict(runID, verdict string) {
	dir, err := e.runsDir()
	if err == nil {
		var path string
		if path, err = engine.FindRun(dir, runID); err == nil {
			err = engine.AppendEvent(path, runID, engine.VerdictEvent{Verdict: verdict}, e.journalKey())
		}
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "locum runs: warning: the verdict was not recorded in the run's journal: %v\n", err)
	}
}
