package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v3"
)

func (e *env) versionCommand() *cli.Command {
	return &cli.Command{
		Name:         "version",
		Usage:        "print locum's module version and the VCS revision it was built from",
		UsageText:    "locum version",
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			fmt.Fprintf(e.stdout, "locum version %s\n", fullVersion())
			return nil
		},
	}
}

func (e *env) helpCommand() *cli.Command {
	return &cli.Command{
		Name:         "help",
		Usage:        "show the help of locum or of one command",
		UsageText:    "locum help [COMMAND [SUBCOMMAND]]",
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			names := cmd.Args().Slice()
			if len(names) == 0 {
				return cli.ShowRootCommandHelp(cmd.Root())
			}
			parent := cmd.Root()
			for _, name := range names[:len(names)-1] {
				sub := parent.Command(name)
				if sub == nil {
					return usagef(cmd, "no command %q", name)
				}
				parent = sub
			}
			last := names[len(names)-1]
			if parent.Command(last) == nil || last == "help" && parent == cmd.Root() {
				return usagef(cmd, "no command %q", last)
			}
			return cli.ShowCommandHelp(ctx, parent, last)
		},
	}
}
