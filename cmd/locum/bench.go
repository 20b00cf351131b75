package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/bench"
	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) benchCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "models", Usage: "the models to compare, separated by commas; unset, every chat model the servers list"},
		&cli.BoolFlag{Name: "evals", Usage: "the pack's eval tasks, each graded by its predicate"},
		&cli.StringFlag{Name: "tasks", Usage: "a bench folder: its bench.json's tasks (spec/bench.md)"},
		&cli.IntFlag{Name: "from-journal", Usage: "replay your last N delegations of --mode from their sealed journals, each at the commit it started from"},
		&cli.StringFlag{Name: "mode", Value: "transform", DefaultText: "transform", Usage: "the mode whose delegations --from-journal replays"},
		&cli.StringFlag{Name: "resume", Usage: "go on with the interrupted bench of this id, over its models and tasks, without running its cells again"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout (spec/bench-result.schema.json)"},
		&cli.BoolFlag{Name: "markdown", Usage: "print the table as Markdown, for a pull request"},
	}
	flags = append(flags, settingFlags(bench.Mode.Name)...)
	return &cli.Command{
		Name:     "bench",
		Category: groupSetUp,
		Usage:    "compare the models your servers list on the same tasks: the eval tasks, a bench folder, or your own past delegations",
		Description: "Each task is asked of each model as a cell: a job of its mode under the same rails as a single\n" +
			"call, in a git worktree of its own at the task's commit, spread over --servers with up to --jobs\n" +
			"at once (a server that reports its slots is given no more than those). The models are every\n" +
			"chat model the servers list, or --models. Routing stays aside: the bench names its models, and\n" +
			"earns a role nothing; locum roles accept ROLE MODEL --from-bench RUN_ID records a model's figures.\n\n" +
			"The tasks: --evals, the pack's eval tasks graded by their predicates; --tasks DIR, a bench\n" +
			"folder (a snapshot or a commit, a file and span, the task, the verify, and optionally an oracle\n" +
			"the model never sees); --from-journal N, your last N delegations of --mode replayed from their\n" +
			"sealed journals at the commit each started from, a run you accepted or rejected carrying your\n" +
			"verdict to a cell that makes the same change. The table has a row per model: kept, fixed, held,\n" +
			"red, refused, errors, right of judged, the median and 90th-percentile wall time, the time to\n" +
			"first token and decode rate the servers report, tokens, what the host would have saved by the\n" +
			"ledger's cost model, and the weights as the server describes them. A model the server stops\n" +
			"serving, a server gone, or a verify that cannot run is that cell's outcome, never the bench's.\n" +
			"An interrupted bench goes on with --resume RUN_ID.",
		UsageText: "locum bench [--models A,B] [--evals] [--tasks DIR] [--from-journal N [--mode MODE]] [--servers URL,URL] [--jobs N] [--json | --markdown]\n   locum bench --resume RUN_ID",
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum bench --models qwen2.5-coder-1.5b-instruct,smollm2-135m-instruct --tasks bench/`,
				`locum bench --from-journal 20 --servers http://127.0.0.1:8080/v1,http://127.0.0.1:8081/v1 --markdown`,
				`locum bench --resume 20261204T201530Z-5c1f0e`,
			},
			exits: exitWords{
				done:     "every cell ran to an outcome, whatever each model made of its task; the table is printed",
				red:      "a refusal before any cell (an endpoint off loopback, a journal not sealed to resume)",
				couldNot: "no task, no model, no server answering, a bench folder that does not hold, or a stop part way (--resume goes on)",
			},
		}),
		Flags:        localFlags(flags),
		OnUsageError: e.machineUsageError,
		Action:       e.machineAction(e.bench),
	}
}

func (e *env) bench(ctx context.Context, cmd *cli.Command) error {
	resume := cmd.String("resume")
	sources := cmd.Bool("evals") || cmd.String("tasks") != "" || cmd.IsSet("from-journal")
	switch {
	case cmd.NArg() > 0:
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	case resume != "" && (sources || cmd.IsSet("models")):
		return usagef(cmd, "--resume runs the models and tasks of the bench it resumes: give no --models, --evals, --tasks or --from-journal")
	case resume == "" && !sources:
		return usagef(cmd, "name the tasks: --evals, --tasks DIR or --from-journal N")
	case cmd.IsSet("from-journal") && cmd.Int("from-journal") < 1:
		return usagef(cmd, "--from-journal %d: want how many delegations to replay, 1 or more", cmd.Int("from-journal"))
	case cmd.IsSet("mode") && !cmd.IsSet("from-journal"):
		return usagef(cmd, "--mode names the mode whose delegations --from-journal replays; give --from-journal N")
	case cmd.Bool("json") && cmd.Bool("markdown"):
		return usagef(cmd, "--json and --markdown each print the table: give one")
	}
	var models []string
	for _, m := range strings.Split(cmd.String("models"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			models = append(models, m)
		}
	}
	if cmd.IsSet("models") && len(models) == 0 {
		return usagef(cmd, "--models names no model")
	}
	folder := cmd.String("tasks")
	if folder != "" && !filepath.IsAbs(folder) {
		wd, err := e.getwd()
		if err != nil {
			return err
		}
		folder = filepath.Join(wd, folder)
	}
	layer, err := e.jobs(setFlags(cmd, bench.Mode.Name))
	if err != nil {
		return err
	}
	p, err := layer.Prepare(ctx, bench.Mode, job.Call{Argv: e.args[min(1, len(e.args)):], Observer: e.observer(cmd)})
	if err != nil {
		return jobError(cmd, err)
	}
	j := &bench.Job{Layer: layer, Models: models, Evals: cmd.Bool("evals"), EvalTasks: evalBenchTasks, Folder: folder, Resume: resume}
	if cmd.IsSet("from-journal") {
		j.Replay, j.ReplayMode = cmd.Int("from-journal"), cmd.String("mode")
	}
	if !cmd.Bool("json") {
		out := logAboveProgress{e}
		j.Progress = func(pr bench.Progress) { printBenchProgress(out, pr) }
	}
	res, err := p.Run(ctx, j)
	if err != nil {
		return jobError(cmd, err)
	}
	return e.finish(cmd, res, benchOutput(cmd))
}

// evalBenchTasks are the pack's eval tasks as a bench asks them: each a screen of the one task,
// graded by its predicate.
func evalBenchTasks() []bench.PromptTask {
	var out []bench.PromptTask
	for _, t := range evals.Tasks() {
		out = append(out, bench.PromptTask{ID: t.ID, Fingerprint: t.Fingerprint(), Cell: func() (engine.Job, func() bench.Graded) {
			j := &evals.ScreenJob{Tasks: []evals.Task{t}}
			return j, func() bench.Graded {
				if len(j.Results) == 0 {
					return bench.Graded{}
				}
				g := j.Results[0].Grade
				last := ""
				if n := len(g.Evidence); n > 0 {
					last = g.Evidence[n-1]
				}
				return bench.Graded{Graded: true, Passed: g.Passed, Evidence: last}
			}
		}})
	}
	return out
}

// printBenchProgress writes a line per cell as it starts and as it ends, with the bench's counts.
func printBenchProgress(w io.Writer, p bench.Progress) {
	var line string
	switch {
	case p.Started != nil:
		c := p.Started
		line = fmt.Sprintf("%s on %s started on %s", untrusted.Escape(c.Task), untrusted.Escape(c.Model), untrusted.Escape(c.Server))
	case p.Ended != nil:
		line = cellLine(*p.Ended)
	default:
		return
	}
	fmt.Fprintf(w, "bench: %s [%d of %d done, %d running]\n", line, p.Done, p.Total, p.Running)
}

// cellLine is one cell's line: its task, model, status and outcome, and the oracle's word.
func cellLine(c engine.BenchCell) string {
	line := fmt.Sprintf("%s on %s %s", untrusted.Escape(c.Task), untrusted.Escape(c.Model), untrusted.Escape(c.Status))
	if c.Outcome != "" {
		line += ": " + untrusted.Escape(c.Outcome)
	}
	if c.Right != nil {
		word := "wrong"
		if *c.Right {
			word = "right"
		}
		line += "; " + word + " (" + untrusted.Escape(c.Oracle) + ")"
	}
	return line
}

// benchOutput prints the table on stdout, aligned or as Markdown, and the delegations left out
// on stderr; --json's result holds both.
func benchOutput(cmd *cli.Command) output {
	return func(stdout, stderr io.Writer, res *engine.Result) {
		d, ok := res.Details.(*bench.Details)
		if !ok || cmd.Bool("json") {
			return
		}
		for _, l := range d.LeftOut {
			fmt.Fprintf(stderr, "bench: left out run %s: %s\n", untrusted.Escape(l.Run), untrusted.Escape(l.Why))
		}
		if d.LeftOutMore > 0 {
			fmt.Fprintf(stderr, "bench: left out %d more\n", d.LeftOutMore)
		}
		if len(d.Rows) > 0 {
			_ = bench.WriteTable(stdout, d.Rows, cmd.Bool("markdown"))
		}
	}
}
