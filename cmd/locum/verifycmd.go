package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/verify"
)

func (e *env) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:     "verify",
		Category: groupSetUp,
		Usage:    "run the verify recipes of the composed packs and the workspace",
		Description: "Each recipe runs with bash -c from the repository root, stdin closed, and prints\n" +
			"ok|FAIL|ERROR NAME (duration). Name recipes by category/name:id or by id; none runs all.",
		UsageText: "locum verify [--list] [ID...]",
		Metadata: helpOf(commandHelp{
			examples: []string{
				"locum verify --list",
				"locum verify",
				"locum verify tools/local-llm:ab-run",
			},
			exits: exitWords{
				done:     "every recipe passes",
				red:      "a recipe is red",
				couldNot: "a recipe could not run (its exit 2, 126 or 127, a missing requirement, a signal), or there is nothing to run",
			},
		}),
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "print each recipe's name and command instead of running them"},
		},
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			_, c, err := e.workspace()
			if err != nil {
				return err
			}
			recipes, err := verify.Select(c, cmd.Args().Slice())
			if err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum verify: %w", err))
			}
			if cmd.Bool("list") {
				for _, r := range recipes {
					fmt.Fprintf(e.stdout, "%s\t%s\n", esc(r.Name), esc(r.Run))
				}
				return nil
			}
			outcomes, err := verify.Run(ctx, c.Root, recipes, e.stdout)
			if err != nil {
				return err
			}
			failed := 0
			for _, o := range outcomes {
				if o.Verdict != verify.Green {
					failed++
				}
			}
			fmt.Fprintf(e.stdout, "verify: %s, %d not green\n", client.Count(len(outcomes), "recipe", "recipes"), failed)
			if code := verify.Worst(outcomes); code != 0 {
				return withCode(code, errors.New(""))
			}
			return nil
		},
	}
}
