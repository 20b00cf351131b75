package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/locumdev/locum/runner"
)

func (e *env) transformCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Usage: "the file to edit (required)"},
		&cli.StringFlag{Name: "lines", Usage: "the span the model may change: A-B (1-based, inclusive), A- to the end; default the whole file"},
		&cli.StringFlag{Name: "verify", Usage: "the command that judges the edit (required): exit 0 keeps it, 1 retries, anything else restores and stops"},
		&cli.StringFlag{Name: "task-file", Usage: "read the task from this file instead of the argument"},
		&cli.StringFlag{Name: "model", Usage: "the model to use: an operator's explicit choice (routing=operator)"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as one JSON object on stdout"},
	}
	flags = append(flags, settingFlags("transform")...)
	return &cli.Command{
		Name:  "transform",
		Usage: "edit one file span with the local model; keep the edit only if the verify command exits 0",
		Description: "The model gets the span (with a few lines of context), the task, and on a retry the end of\n" +
			"the verify output. Each edit is written atomically, then --verify runs with bash -c from the\n" +
			"repository root. Exit 0 keeps the edit; exit 1 is fed back for the next attempt; any other exit,\n" +
			"a timeout or a signal restores the file at once. Unless the verdict is 0 the file ends with its\n" +
			"original bytes and mode, also after a crash: the next locum start restores it.\n\n" +
			"The task is the argument, --task-file, or - to read it from stdin.\n" +
			"Exit 0 kept; 1 red after the last attempt, or refused before any request; 2 could not run.",
		UsageText:    `locum transform --file PATH [--lines A-B] --verify "CMD" [--model ID | --role code] [options] "TASK"`,
		Flags:        flags,
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			return e.transform(ctx, cmd)
		},
	}
}

func (e *env) transform(ctx context.Context, cmd *cli.Command) error {
	if cmd.String("file") == "" {
		return usagef(cmd, "--file is required")
	}
	if !cmd.IsSet("verify") {
		return usagef(cmd, "--verify is required: the edit is kept only when that command exits 0")
	}
	task, err := e.readTask(cmd)
	if err != nil {
		return err
	}
	spec, c, wd, err := e.chatRun(cmd, "transform")
	if err != nil {
		return err
	}
	res := runner.Execute(ctx, spec, runner.TransformSteps(runner.TransformOptions{
		File: cmd.String("file"), Lines: cmd.String("lines"), Verify: cmd.String("verify"), Task: task, Cwd: wd, Root: c.Root,
	}))
	e.transformSummary(res)
	return e.finish(cmd, res)
}

func (e *env) readTask(cmd *cli.Command) (string, error) {
	file := cmd.String("task-file")
	args := cmd.Args().Slice()
	switch {
	case file != "" && len(args) > 0:
		return "", usagef(cmd, "give the task as an argument or with --task-file, not both")
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return "", withCode(exitCouldNot, fmt.Errorf("locum: --task-file: %w", err))
		}
		return string(data), nil
	case len(args) == 0:
		return "", usagef(cmd, "missing TASK (an argument, --task-file, or - for stdin)")
	case len(args) > 1:
		return "", usagef(cmd, "want one TASK argument, got %d (quote the task)", len(args))
	case args[0] == "-":
		data, err := io.ReadAll(e.stdin)
		if err != nil {
			return "", withCode(exitCouldNot, fmt.Errorf("locum: reading the task from stdin: %w", err))
		}
		return string(data), nil
	}
	return args[0], nil
}

// progress is stderr when it is a terminal: live progress there, none in a log.
func (e *env) progress() io.Writer {
	f, ok := e.stderr.(*os.File)
	if o, wrapped := e.stderr.(*stderrAfterStdout); wrapped {
		f, ok = o.file, true
	}
	if ok && term.IsTerminal(int(f.Fd())) {
		return f
	}
	return nil
}

func (e *env) transformSummary(res *runner.Result) {
	d := res.Details
	if d == nil || d["file"] == nil {
		return
	}
	outcome, _ := d["outcome"].(string)
	if outcome == "" {
		return
	}
	line := fmt.Sprintf("transform: %s %s lines %v", outcome, d["file"], d["lines"])
	if diff, ok := d["diff"].(string); ok {
		line += " (" + diff + ")"
	}
	if v, ok := d["verify_exit"]; ok && v != nil {
		line += fmt.Sprintf(", verify exit %v", v)
	}
	fmt.Fprintln(e.stderr, line)
}

// finish prints the receipt (and the JSON result) and maps the result to the exit code.
func (e *env) finish(cmd *cli.Command, res *runner.Result) error {
	if res.Error != nil {
		msg := strings.TrimSpace(res.Error.Message)
		fmt.Fprintf(e.stderr, "locum %s: %s\n", res.Mode, msg)
	}
	fmt.Fprintln(e.stderr, res.Receipt())
	if cmd.Bool("json") {
		data, err := json.Marshal(res)
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", data)
	}
	if res.ExitCode != 0 {
		return withCode(res.ExitCode, errors.New(""))
	}
	return nil
}
