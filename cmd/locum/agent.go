package main

import (
	"context"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/agent"
)

func (e *env) agentCommand() *cli.Command {
	// Own flags first, in the order help lists them: --role, a setting, stands beside --model.
	flags := []cli.Flag{
		&cli.StringFlag{Name: "verify", Usage: "the command that judges the work (required): exit 0 commits it on the branch, 1 starts a fix round, anything else leaves nothing"},
		&cli.StringFlag{Name: "from", Usage: "the commit the run's branch starts at", DefaultText: "HEAD"},
		&cli.BoolFlag{Name: "keep", Usage: "keep the worktree and branch of a run that did not complete, to read them"},
		&cli.StringFlag{Name: "task-file", Usage: "read the task from this file instead of the argument"},
		&cli.StringFlag{Name: "model", Usage: "the model to use: an operator's explicit choice (routing=operator)"},
	}
	flags = append(flags, settingFlags("agent")...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "agent",
		Category: groupDelegate,
		Usage:    "run a multi-file task with the local model in a worktree of its own; commit it on a branch only if the verify command exits 0",
		Description: "The model works in a new git worktree on the branch locum/agent/RUN_ID (from --from) with\n" +
			"seven tools: read_file, list_dir, grep, edit_file, write_file, run_verify, finish.\n" +
			"There is no shell. Guardrails in code keep every path inside the worktree, keep .git\n" +
			"untouched, cap file sizes, want a read before an edit, and stop a run that loops or stalls.\n" +
			"When the model finishes, --verify runs in the worktree: exit 0 commits the work on the branch;\n" +
			"exit 1 gives the model up to --verify-rounds fix rounds. Anything else removes the worktree\n" +
			"and the branch (--keep leaves them). Your own working tree is never touched: read the work with\n" +
			"locum runs show RUN --diff, take it with locum runs accept RUN, drop it with locum runs reject RUN.\n\n" +
			"details.status is one of completed, verify_failed, max_turns, stalled, model_error,\n" +
			"context_exhausted, refused, interrupted, no_change (the verify passed with no file changed).",
		UsageText: `locum agent --verify "CMD" [--model ID | --role agent] [--max-turns 30] [--from REF] [--json] "TASK"`,
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum agent --verify "go test ./..." "rename Config.Addr to Config.Address everywhere it is used"`,
				`locum agent --verify "go test ./pkg/store" --max-turns 40 --from main --keep --task-file task.md`,
				`locum agent --verify "make test" --role agent --json "add a --dry-run flag to the sync command"`,
			},
			exits: exitWords{done: "completed, with the verify green", red: "a red verdict or a refusal (details.status says which)"},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action:       e.machineAction(e.agent),
	}
}

func (e *env) agent(ctx context.Context, cmd *cli.Command) error {
	if !cmd.IsSet("verify") {
		return usagef(cmd, "--verify is required: the work is kept only when that command exits 0")
	}
	if err := checkTaskArgs(cmd); err != nil {
		return err
	}
	p, err := e.prepare(ctx, cmd, agent.Mode)
	if err != nil {
		return err
	}
	task, what, err := e.readTask(cmd, p.Settings().Int(packs.MaxInputBytes))
	if err != nil {
		return err
	}
	res, err := e.runJob(ctx, cmd, p, agent.Job{Task: task, TaskSource: what, Verify: cmd.String("verify"), From: cmd.String("from"), Keep: cmd.Bool("keep")}, nil)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, nil)
}
