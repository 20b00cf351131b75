package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
	"github.com/locumdev/locum/workflow"
)

func (e *env) runCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringSliceFlag{Name: "param", Usage: "a parameter of the workflow, NAME=VALUE (repeat the flag for each)"},
		&cli.StringFlag{Name: "resume", Usage: "go on with the interrupted run of this id, under the workflow and parameters it ran with, without redoing its green items"},
		&cli.StringFlag{Name: "model", Usage: "the model every item uses: an operator's explicit choice (routing=operator); without it each step's mode runs its role's model"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
	}
	flags = append(flags, settingFlags(workflow.Mode.Name)...)
	return &cli.Command{
		Name:     "run",
		Category: groupDelegate,
		Usage:    "run a pack's workflow: each item in a worktree of its own, across a pool of servers, the green ones combined on one branch",
		Description: "A workflow is a list of steps a composed pack declares, each a mode (transform, summarize,\n" +
			"dedup) run once or for each file, declaration or line. Every item runs in a git worktree of\n" +
			"its own at the branch as the steps before left it, under the same rails as a single call, with\n" +
			"up to --jobs at once spread over --servers (a server that reports its slots, such as\n" +
			"llama-server, is given no more than those). A green edit is committed; after each step the\n" +
			"green items are applied in a stable order on the branch locum/run/RUN_ID, and one that does\n" +
			"not apply is reported as a conflict and left out. The workflow's verify then runs on the\n" +
			"combined branch: only a pass offers it (locum runs show --diff RUN_ID, runs accept, runs reject).\n\n" +
			"With no argument it lists the workflows the composed packs declare. An interrupted run goes on\n" +
			"with --resume RUN_ID.",
		UsageText: "locum run WORKFLOW [--param NAME=VALUE]... [--servers URL,URL] [--jobs N] [--json]\n   locum run --resume RUN_ID\n   locum run",
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum run`,
				`locum run go-doc --param dir=pkg/calc --jobs 2`,
				`locum run --resume 20261204T201530Z-5c1f0e --servers http://127.0.0.1:8080/v1,http://127.0.0.1:8081/v1`,
			},
			exits: exitWords{done: "every item green and the branch verified, or the workflows listed", red: "an item not green, the final verify red, or a refusal"},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Args().Len() == 0 && cmd.String("resume") == "" {
				return e.listWorkflows(cmd)
			}
			return e.machineAction(e.runWorkflow)(ctx, cmd)
		},
	}
}

// listWorkflows prints each composed workflow, its parameters and its steps.
func (e *env) listWorkflows(cmd *cli.Command) error {
	c, err := e.compose(cmd)
	if err != nil {
		return err
	}
	names := c.WorkflowNames()
	if len(names) == 0 {
		fmt.Fprintln(e.stderr, "run: no composed pack declares a workflow")
		return nil
	}
	for _, name := range names {
		wf, from, _ := c.Workflow(name)
		fmt.Fprintf(e.stdout, "%s (%s): %s\n", name, from, untrusted.Escape(wf.Summary))
		for _, p := range slices.Sorted(maps.Keys(wf.Params)) {
			def := "required"
			if d := wf.Params[p].Default; d != nil {
				def = "default " + untrusted.Escape(*d)
			}
			fmt.Fprintf(e.stdout, "  --param %s=...  %s (%s)\n", p, untrusted.Escape(wf.Params[p].Doc), def)
		}
		for _, st := range wf.Steps {
			over := "once"
			if st.ForEach != nil {
				kind, pattern := st.ForEach.Kind()
				over = "for each of " + kind + " " + untrusted.Escape(pattern)
			}
			fmt.Fprintf(e.stdout, "  step %s: %s, %s\n", st.Name, st.Mode, over)
		}
		if wf.Verify != "" {
			fmt.Fprintf(e.stdout, "  verify: %s\n", untrusted.Escape(wf.Verify))
		}
	}
	return nil
}

func (e *env) runWorkflow(ctx context.Context, cmd *cli.Command) error {
	args := cmd.Args().Slice()
	resume := cmd.String("resume")
	switch {
	case resume != "" && (len(args) > 0 || len(cmd.StringSlice("param")) > 0):
		return usagef(cmd, "--resume runs the workflow and parameters of the run it resumes: give no WORKFLOW or --param")
	case len(args) > 1:
		return usagef(cmd, "want one WORKFLOW, got %d", len(args))
	}
	params := map[string]string{}
	for _, kv := range cmd.StringSlice("param") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return usagef(cmd, "--param %q: want NAME=VALUE", kv)
		}
		if _, dup := params[k]; dup {
			return usagef(cmd, "--param %s is given twice", k)
		}
		params[k] = v
	}
	layer, err := e.jobs(setFlags(cmd, workflow.Mode.Name))
	if err != nil {
		return err
	}
	call := job.Call{Model: cmd.String("model"), Argv: cmd.Args().Slice(), Observer: e.observer(cmd)}
	p, err := layer.Prepare(ctx, workflow.Mode, call)
	if err != nil {
		return jobError(cmd, err)
	}
	j := &workflow.Job{Layer: layer, Call: job.Call{Model: call.Model}, Name: cmp.Or(cmd.Args().First(), ""), Params: params, Resume: resume}
	if !cmd.Bool("json") {
		out := logAboveProgress{e}
		j.Progress = func(pr workflow.Progress) { printProgress(out, pr) }
	}
	res, err := e.runJob(ctx, cmd, p, j, workflowOutput(cmd))
	if err != nil {
		return err
	}
	return e.finish(cmd, res, workflowOutput(cmd))
}

// printProgress writes a line per item as it starts and as it ends, with the counts of its step
// and of each server's items in it.
func printProgress(w io.Writer, p workflow.Progress) {
	var line string
	switch {
	case p.Started != nil:
		it := p.Started
		line = fmt.Sprintf("%s %d started %s on %s", untrusted.Escape(it.Step), it.Index, untrusted.Escape(it.Item), untrusted.Escape(it.Server))
	case p.Item != nil:
		line = workflow.ItemLine(*p.Item)
	default:
		return
	}
	var per []string
	for _, s := range p.Servers {
		per = append(per, fmt.Sprintf("%s %d running %d done %d red", untrusted.Escape(s.URL), s.Running, s.Done, s.Red))
	}
	fmt.Fprintf(w, "run: %s [%d of %d done, %d running, %d red; %s]\n", line, p.Done, p.Total, p.Running, p.Red, strings.Join(per, "; "))
}

// workflowOutput prints each item's line on stdout (none with --json, whose result has them).
func workflowOutput(cmd *cli.Command) output {
	return func(stdout, _ io.Writer, res *engine.Result) {
		if cmd.Bool("json") {
			return
		}
		d, ok := res.Details.(*workflow.Details)
		if !ok || d.Ran == nil {
			return
		}
		for _, it := range d.Items {
			fmt.Fprintln(stdout, workflow.ItemLine(it))
		}
	}
}

// compose reads the workspace's packs for a command that runs no mode.
func (e *env) compose(cmd *cli.Command) (*packs.Composition, error) {
	layer, err := e.jobs(nil)
	if err != nil {
		return nil, err
	}
	c, err := layer.Composition()
	if err != nil {
		return nil, withCode(exitCouldNot, fmt.Errorf("%s: %w", cmd.FullName(), err))
	}
	return c, nil
}
