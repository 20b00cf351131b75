package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/runner/summarize"
)

func (e *env) summarizeCommand() *cli.Command {
	// Own flags first, in the order help lists them: --role, a setting, stands beside --model.
	flags := []cli.Flag{
		&cli.StringFlag{Name: "file", Usage: "the file to summarize (required)"},
		&cli.StringFlag{Name: "lines", Usage: "the span to summarize: " + scope.LinesForm, DefaultText: "whole file"},
		&cli.StringFlag{Name: "symbol", Usage: "instead of --lines, the span is this declaration with its decorators and doc comment: a function, Type.Method or Class.method, a type or class, a const or var (Go, Python, TypeScript, JavaScript, Rust; locum symbols lists them)"},
		&cli.StringFlag{Name: "model", Usage: "the model to use: an operator's explicit choice (routing=operator)"},
	}
	flags = append(flags, settingFlags("summarize")...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print every claim with its verdict as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "summarize",
		Category: groupDelegate,
		Usage:    "a digest of a file span whose every claim is checked against the file",
		Description: "The model gets the span with line numbers and returns claims, each with the lines it rests on\n" +
			"and an exact quote. The evidence gate, in code, marks a claim unsupported when its text says\n" +
			"nothing beyond its quote, its lines fall outside the span, or its quote (whitespace and\n" +
			"markdown markup aside) is not in those lines; the model cannot change a verdict. Supported\n" +
			"claims print as `L40-52 text`, then `unsupported: N`.",
		UsageText: `locum summarize --file PATH [--lines A-B | --symbol NAME] [--max-words 150] [--role prose | --model ID] [--json] [FOCUS]`,
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum summarize --file runner/engine/engine.go --symbol Execute`,
				`locum summarize --file docs/security.md --lines 1-80 --max-words 80 "what the sandbox does not promise"`,
				`locum summarize --file CHANGELOG.md --lines 1-40 --role prose --json`,
			},
			exits: exitWords{done: "at least one claim is supported", red: "none is (do not trust the digest), or refused before any request"},
		}),
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action: e.machineAction(func(ctx context.Context, cmd *cli.Command) error {
			if cmd.String("file") == "" {
				return usagef(cmd, "--file is required")
			}
			if cmd.NArg() > 1 {
				return usagef(cmd, "want at most one FOCUS argument, got %d (quote it)", cmd.NArg())
			}
			return e.summarize(ctx, cmd)
		}),
	}
}

func (e *env) summarize(ctx context.Context, cmd *cli.Command) error {
	p, err := e.prepare(ctx, cmd, summarize.Mode)
	if err != nil {
		return err
	}
	j := &summarize.Job{File: cmd.String("file"), Lines: cmd.String("lines"), Symbol: cmd.String("symbol"), Focus: cmd.Args().First()}
	digest := func(stdout, _ io.Writer, _ *engine.Result) {
		if !cmd.Bool("json") && j.Claims != nil {
			fmt.Fprint(stdout, summarize.ClaimLines(j.Claims))
		}
	}
	res, err := e.runJob(ctx, cmd, p, j, digest)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, digest)
}
