package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) mcpCommand() *cli.Command {
	flags := declareFlags(packs.ServeFlags(), nil)
	flags = append(flags, &cli.BoolFlag{Name: "allow-model", Usage: "let a tool call name a model (routing=operator); without it a call runs only the model its role is routed to (earned by a signed A/B record, or accepted with locum roles accept)"},
		&cli.StringFlag{Name: packs.ServerDirFlag, Usage: "serve the repository that holds DIR, as if started in DIR: a call's relative paths resolve from it", DefaultText: "working directory"})
	return &cli.Command{
		Name:     "mcp",
		Category: groupSetUp,
		Usage:    "serve the modes as MCP tools on stdin and stdout, for a host such as Claude Code, Codex or Cursor",
		Description: "A Model Context Protocol server on stdio, started by the host from the repository root (locum init\n" +
			"writes the host's .mcp.json), or given the project with --" + packs.ServerDirFlag + " (the Claude Code plugin locum init\n" +
			"--plugin writes passes the project Claude Code opened). It serves the repository that holds that\n" +
			"directory, found once as it starts. Its tools are status, transform, verify_check, summarize,\n" +
			"dedup, agent, run, symbols, runs_show and ledger: the same runs as the commands, with the same\n" +
			"rails, journal and receipt. A call's arguments are the flags in snake_case, and a call may only\n" +
			"narrow a rail: the flags below that no call takes (the endpoint's reach, the pool of servers,\n" +
			"the sandbox, the host's prices) are the operator's, with the environment and the user config.\n" +
			"Two calls on one file take turns. Warnings and one receipt per call go to stderr.\n" +
			"SIGTERM, SIGINT or SIGHUP stops every call in flight at once, as it stops a command (each\n" +
			"verify stopped, each file restored), whether or not the host still holds stdin open.",
		UsageText: "locum mcp [--allow-model] [--dir DIR] [--base-url URL] [--allow-remote] [--servers URL,URL]",
		Metadata: helpOf(commandHelp{
			examples: []string{
				"locum mcp",
				"locum mcp --allow-model --sandbox require",
				"locum mcp --servers http://127.0.0.1:8080/v1,http://127.0.0.1:8081/v1",
			},
			exits: exitWords{done: "the host closed stdin", couldNot: "the server did not start, or a signal stopped it"},
		}),
		Flags:        flags,
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			return e.mcp(ctx, cmd)
		},
	}
}

func (e *env) mcp(ctx context.Context, cmd *cli.Command) error {
	wd, err := e.getwd()
	if err != nil {
		return err
	}
	if cmd.IsSet(packs.ServerDirFlag) {
		// A relative DIR is the working directory's; the server resolves every call from DIR.
		given := cmd.String(packs.ServerDirFlag)
		if given == "" {
			// An empty DIR would be the working directory: a host that named none must not get
			// whatever folder it started the server in.
			return usagef(cmd, "--%s wants a directory", packs.ServerDirFlag)
		}
		dir := given
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef(cmd, "--%s %s: not a directory", packs.ServerDirFlag, untrusted.Escape(given))
		}
		wd = dir
	}
	srv, err := mcp.New(mcp.Options{
		Dir: wd, Env: e.lookup, Flags: givenFlags(cmd, packs.ServeFlags()), AllowModel: cmd.Bool("allow-model"),
		Version: version(), Log: e.stderr,
	})
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	err = srv.Run(ctx, mcp.Stdio(ctx, e.stdin, e.unbuffered()))
	switch {
	case ctx.Err() != nil:
		// A signal stops the server as it stops any command: the calls in flight are stopped
		// and their files restored first, and Run's error says so.
		return withCode(exitCouldNot, fmt.Errorf("locum mcp: %w", err))
	case err == nil || errors.Is(err, io.EOF):
		// The host ends a session by closing stdin.
		return nil
	}
	return withCode(exitCouldNot, fmt.Errorf("locum mcp: %w", err))
}
