package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/transform"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) transformCommand() *cli.Command {
	// Own flags first, in the order help lists them: --role, a setting, stands beside --model.
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Usage: "the file to edit (required)"},
		&cli.StringFlag{Name: "lines", Usage: "the span the model may change: " + scope.LinesForm, DefaultText: "whole file"},
		&cli.StringFlag{Name: "symbol", Usage: "instead of --lines, the span is this declaration with its decorators and doc comment: a function, Type.Method or Class.method, a type or class, a const or var (Go, Python, TypeScript, JavaScript, Rust; locum symbols lists them)"},
		&cli.StringFlag{Name: "verify", Usage: "the command that judges the edit (required): exit 0 keeps it, 1 retries, anything else restores and stops"},
		&cli.StringFlag{Name: "task-file", Usage: "read the task from this file instead of the argument"},
		&cli.StringFlag{Name: "model", Usage: "the model to use: an operator's explicit choice (routing=operator)"},
	}
	flags = append(flags, settingFlags("transform")...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "transform",
		Category: groupDelegate,
		Usage:    "edit one file span with the local model; keep the edit only if the verify command exits 0",
		Description: "The model gets the span (with a few lines of context), the task, and on a retry the end of\n" +
			"the verify output. Each edit is written atomically, then --verify runs with bash -c from the\n" +
			"repository root. Exit 0 keeps the edit; exit 1 is fed back for the next attempt; any other exit,\n" +
			"a timeout or a signal restores the file at once. Unless the verdict is 0 the file ends with its\n" +
			"original bytes and mode, also after a crash: the next locum start restores it.\n\n" +
			"The task is the argument, --task-file, or - to read it from stdin.",
		UsageText: `locum transform --file PATH [--lines A-B | --symbol NAME] --verify "CMD" [--model ID | --role code] [options] "TASK"`,
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum transform --file pkg/calc/calc.go --lines 10-24 --verify "go test ./pkg/calc" "return an error wrapped with %w instead of panicking"`,
				`locum transform --file pkg/calc/calc.go --symbol Clamp --verify "go test ./pkg/calc" --edit-guard signature "make Clamp return lo when x < lo"`,
				`locum transform --file docs/intro.md --lines 5-30 --verify "! grep -q TODO docs/intro.md" --task-file task.md --json`,
			},
			exits: exitWords{done: "the edit is kept", red: "red after the last attempt, or refused before any request"},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action:       e.machineAction(e.transform),
	}
}

func (e *env) transform(ctx context.Context, cmd *cli.Command) error {
	if cmd.String("file") == "" {
		return usagef(cmd, "--file is required")
	}
	if !cmd.IsSet("verify") {
		return usagef(cmd, "--verify is required: the edit is kept only when that command exits 0")
	}
	if err := checkTaskArgs(cmd); err != nil {
		return err
	}
	p, err := e.prepare(ctx, cmd, transform.Mode)
	if err != nil {
		return err
	}
	task, what, err := e.readTask(cmd, p.Settings().Int(packs.MaxInputBytes))
	if err != nil {
		return err
	}
	res, err := e.runJob(ctx, cmd, p, transform.Job{File: cmd.String("file"), Lines: cmd.String("lines"), Symbol: cmd.String("symbol"),
		Verify: cmd.String("verify"), Task: task, TaskSource: what}, nil)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, nil)
}

// checkTaskArgs refuses a command line that does not say where the task is, before anything runs.
func checkTaskArgs(cmd *cli.Command) error {
	args := cmd.Args().Slice()
	switch {
	case cmd.String("task-file") != "" && len(args) > 0:
		return usagef(cmd, "give the task as an argument or with --task-file, not both")
	case cmd.String("task-file") != "":
		return nil
	case len(args) == 0:
		return usagef(cmd, "missing TASK (an argument, --task-file, or - for stdin)")
	case len(args) > 1:
		return usagef(cmd, "want one TASK argument, got %d (quote the task)", len(args))
	}
	return nil
}

// readTask reads the task from its argument, --task-file or stdin. The task goes into the prompt,
// so it counts against the input budget: a larger one is a refusal, found without reading past the
// budget; a task file must be a regular file, so a FIFO or a device can neither block nor flood.
func (e *env) readTask(cmd *cli.Command, limit int64) (task, what string, err error) {
	var data []byte
	what = "the task"
	switch file := cmd.String("task-file"); {
	case file != "":
		what = "the task file " + file
		data, err = untrusted.ReadFile(file, limit)
	case cmd.Args().First() == "-":
		what = "the task on stdin"
		data, err = untrusted.ReadAll(e.stdin, what, limit)
	default:
		data = []byte(cmd.Args().First())
	}
	var tl *untrusted.TooLargeError
	switch {
	case errors.As(err, &tl):
		return "", "", withCode(exitRed, fmt.Errorf("locum %s: %w", cmd.Name, &rails.BudgetError{What: what, Size: tl.Size, Limit: limit, Remedy: "shorten the task"}))
	case err != nil:
		return "", "", withCode(exitCouldNot, fmt.Errorf("locum %s: --task-file: %w", cmd.Name, err))
	}
	// The job layer holds the task to the budget, as for a tool call; reading stops at it.
	return string(data), what, nil
}

// output writes what a command prints of a run beside its outcome, error and receipt: a
// digest's claims, a screen's groups.
type output func(stdout, stderr io.Writer, res *engine.Result)

// finish prints the run (render) and maps the result to the exit code.
func (e *env) finish(cmd *cli.Command, res *engine.Result, extra output) error {
	e.stopProgress()
	if err := e.render(cmd, res, extra, e.stdout, e.stderr); err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return &exitError{code: res.ExitCode, err: errors.New(""), receipted: true}
	}
	return nil
}

// render writes what the host reads of a run: the command's own output, the outcome, a kept
// edit's compact diff, the error, the short receipt, and with --json the result object.
func (e *env) render(cmd *cli.Command, res *engine.Result, extra output, stdout, stderr io.Writer) error {
	asJSON := cmd.Bool("json")
	if extra != nil {
		extra(stdout, stderr, res)
	}
	if line := res.Outcome(); line != "" {
		fmt.Fprintln(stderr, line)
	}
	if d, ok := res.Details.(*transform.Details); ok && d.Kept != nil && !asJSON {
		// The file's lines are the repository's text: escaped, as every other line.
		fmt.Fprint(stderr, untrusted.EscapeLines(d.Changes))
	}
	if res.Error != nil {
		// The message may quote a server or a verify command; its own line breaks are locum's.
		msg := untrusted.EscapeLines(strings.TrimSpace(res.Error.Message))
		fmt.Fprintf(stderr, "locum %s: %s\n", res.Mode, msg)
	}
	if res.Handoff != nil && !asJSON {
		printHandoff(stderr, res.Handoff, "")
	}
	fmt.Fprintln(stderr, res.ShortReceipt())
	if asJSON {
		return res.WriteJSON(stdout)
	}
	return nil
}

// countingWriter counts the bytes written to it.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

// shellLine is a command line as a host types it: each argument quoted where a shell needs it.
func shellLine(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'$`\\|&;<>()*?[]#~{}!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}
