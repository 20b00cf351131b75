package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
)

func (e *env) initCommand() *cli.Command {
	return &cli.Command{
		Name:  "init",
		Usage: "set up this repository: a workspace composing tools/local-llm, the delegate-local skill, and the MCP host config",
		Description: "Writes " + packs.WorkspaceFile + ", " + packs.SkillInstallPath + " and " + packs.HostConfigPath + "\n" +
			"(a locum server running `locum mcp`, for Claude Code, Cursor and other MCP hosts) at the repository root.\n" +
			"Run again, it changes nothing. An existing " + packs.HostConfigPath + " gets the locum server added (or its locum\n" +
			"entry replaced), every other server and key kept, with or without --force. A file you changed\n" +
			"is never replaced without --force. Every file is checked before any is written: a refusal (exit 1)\n" +
			"names each conflict and writes nothing.",
		UsageText:    "locum init [--force]",
		Flags:        []cli.Flag{&cli.BoolFlag{Name: "force", Usage: "replace files that differ from what init writes"}},
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			v, err := e.schemas()
			if err != nil {
				return err
			}
			root, err := e.root()
			if err != nil {
				return err
			}
			actions, err := packs.Init(v, root, cmd.Bool("force"))
			if errors.Is(err, packs.ErrRefused) {
				return withCode(exitRed, err)
			}
			if err != nil {
				return withCode(exitCouldNot, err)
			}
			for _, a := range actions {
				line := fmt.Sprintf("%s %s", a.Action, a.File)
				if a.Note != "" {
					line += " (" + a.Note + ")"
				}
				fmt.Fprintln(e.stdout, line)
			}
			return nil
		},
	}
}
