package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"
	"golang.org/x/term"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) rolesCommand() *cli.Command {
	acceptFlags := []cli.Flag{
		&cli.BoolFlag{Name: "yes", Usage: "accept without the [y/N] question (needed where stdin is no terminal)"},
		&cli.BoolFlag{Name: "no-screen", Usage: "accept without screening the model first; the user config says it was skipped"},
		&cli.StringFlag{Name: "journal", Usage: "write the screen's run journal to this file"},
	}
	acceptFlags = localFlags(append(acceptFlags, settingFlags("eval")...))
	return &cli.Command{
		Name:      "roles",
		Category:  groupInspect,
		Usage:     "who may do what: each role's routing now; accept or revoke a model for a role",
		UsageText: "locum roles [--json] | locum roles accept ROLE MODEL [--yes] [--no-screen] | locum roles revoke ROLE",
		Description: "A role runs a model only when it resolves: earned (a signed A/B record's routing, locum eval),\n" +
			"operator (a model the operator accepted with locum roles accept), or none.\n" +
			"locum roles accept screens MODEL on the role's eval tasks, prints the table, and on your\n" +
			"confirmation writes roles.ROLE to your user config (never to the repository). A screen that\n" +
			"fails still lets you accept, after a warning naming what failed.",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum roles",
			"locum roles --json",
		}}),
		Flags:  localFlags([]cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the roles as one JSON object on stdout"}}),
		Action: e.rolesList,
		Commands: []*cli.Command{
			{
				Name:      "accept",
				Usage:     "screen MODEL on ROLE's tasks, then accept it for ROLE in your user config",
				UsageText: "locum roles accept ROLE MODEL [--yes] [--no-screen]",
				Metadata: helpOf(commandHelp{
					examples: []string{
						"locum roles accept code qwen2.5-coder:7b",
						"locum roles accept prose qwen3-8b --yes",
						"locum roles accept agent qwen3-coder-30b --no-screen --yes",
					},
					exits: exitWords{
						done: "accepted: the user config names the model for the role",
						red:  "not accepted, or the screen was refused before any request; nothing written",
					},
				}),
				Flags:  acceptFlags,
				Action: e.rolesAccept,
			},
			{
				Name:      "revoke",
				Usage:     "remove the model accepted for ROLE from your user config",
				UsageText: "locum roles revoke ROLE",
				Metadata: helpOf(commandHelp{
					examples: []string{"locum roles revoke code", "locum roles revoke agent"},
					exits:    exitWords{done: "revoked", red: "the user config accepts no model for the role"},
				}),
				Action: e.rolesRevoke,
			},
		},
	}
}

func (e *env) rolesList(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef(cmd, "unknown command %q", cmd.Args().First())
	}
	v, c, err := e.workspace()
	if err != nil {
		return err
	}
	out := []routing.RoleRouting{}
	for _, role := range sortedKeys(c.Roles()) {
		out = append(out, routing.RoleStatus(v, c, role))
	}
	if cmd.Bool("json") {
		data, err := json.Marshal(map[string]any{"roles": out})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "%s\n", data)
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ROLE\tROUTING\tMODEL\tWHY")
	for _, r := range out {
		model, why := r.Model, ""
		switch r.Routing {
		case "earned":
			why = "signed routing " + r.Record
		case "operator":
			why = "accepted in your user config"
			if r.Since != "" {
				why += " on " + r.Since
			}
		default:
			model = "-"
			why = "no earned routing or accepted model: locum roles accept " + r.Role + " MODEL"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Role, r.Routing, untrusted.Escape(model), why)
	}
	return w.Flush()
}

func (e *env) rolesAccept(ctx context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 2 {
		return usagef(cmd, "locum roles accept takes ROLE MODEL")
	}
	role, model := cmd.Args().Get(0), cmd.Args().Get(1)
	if strings.TrimSpace(model) == "" {
		return usagef(cmd, "MODEL is empty: name the model the server lists")
	}
	v, c, err := e.workspace()
	if err != nil {
		return err
	}
	declared, ok := c.Roles()[role]
	if !ok {
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: no role %q in the composed packs (they declare %s)", role, strings.Join(sortedKeys(c.Roles()), ", ")))
	}
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: %w", err))
	}
	interactive := !cmd.Bool("yes")
	if interactive && !e.stdinIsTerminal() {
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: stdin is no terminal to ask on; add --yes to accept %s for %s", model, role))
	}
	// The effort is not written: a repository's pack may declare the role, and what it says must
	// not become the operator's setting for every repository. The role's effort resolves per run.
	accepted := packs.AcceptedRole{Model: model}
	settings, err := e.resolve(cmd, c, "eval")
	if err != nil {
		return err
	}
	weights, err := engine.IdentifyModel(ctx, settings, model)
	var notListed *engine.ModelNotListedError
	switch {
	case errors.As(err, &notListed):
		return withCode(exitRed, fmt.Errorf("locum roles accept: %s; nothing accepted", untrusted.EscapeLines(err.Error())))
	case err != nil && !cmd.Bool("no-screen"):
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: %s; nothing accepted (locum status says more)", untrusted.EscapeLines(err.Error())))
	case err != nil:
		fmt.Fprintf(e.stderr, "roles: warning: the server could not be asked (%s), so nothing says which weights %s is\n", untrusted.EscapeLines(err.Error()), untrusted.Escape(model))
	case weights != "":
		accepted.Weights = weights
		fmt.Fprintf(e.stderr, "roles: %s is %s, as the server describes it\n", untrusted.Escape(model), untrusted.Escape(weights))
	}
	if cmd.Bool("no-screen") {
		accepted.Screen = &packs.AcceptScreen{Skipped: true}
		fmt.Fprintf(e.stderr, "roles: accepting %s for %s without a screen\n", model, role)
	} else {
		screen, err := e.screenForRole(ctx, cmd, c, settings, role, declared, model)
		if err != nil {
			return err
		}
		accepted.Screen = screen
		if len(screen.Failed) > 0 {
			fmt.Fprintf(e.stderr, "roles: warning: %s failed %d of %d of %s's tasks (%s); a run of the role is still kept only when its verify passes\n",
				untrusted.Escape(model), len(screen.Failed), len(screen.Failed)+len(screen.Passed), role, strings.Join(screen.Failed, ", "))
		}
	}
	if interactive {
		fmt.Fprintf(e.stderr, "accept %s for role %s in %s? [y/N] ", untrusted.Escape(model), role, dirs.UserConfigFile())
		yes, err := e.askYes(ctx)
		if err != nil {
			return withCode(exitCouldNot, fmt.Errorf("locum roles accept: %w; nothing written", err))
		}
		if !yes {
			return withCode(exitRed, fmt.Errorf("locum roles accept: not accepted; nothing written"))
		}
	}
	if err := ctx.Err(); err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: stopped (%v); nothing written", context.Cause(ctx)))
	}
	// The acceptance is the operator's answer, given after the screen: its time is now.
	accepted.AcceptedAt = e.now().UTC().Format(time.RFC3339)
	if err := packs.AcceptRole(v, dirs, role, accepted); err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: %w", err))
	}
	fmt.Fprintf(e.stderr, "roles: accepted %s for %s in %s (routing=operator where no earned routing comes first); locum roles revoke %s undoes it\n", untrusted.Escape(model), role, dirs.UserConfigFile(), role)
	return nil
}

// askYes reads one answer line from stdin; a signal while it waits is an error, never a yes.
func (e *env) askYes(ctx context.Context) (bool, error) {
	answer := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(e.stdin).ReadString('\n')
		answer <- line
	}()
	select {
	case <-ctx.Done():
		fmt.Fprintln(e.stderr)
		return false, fmt.Errorf("stopped (%v)", context.Cause(ctx))
	case line := <-answer:
		a := strings.ToLower(strings.TrimSpace(line))
		return a == "y" || a == "yes", nil
	}
}

// screenForRole runs the screen of locum eval --model on the role's tasks and prints its table.
func (e *env) screenForRole(ctx context.Context, cmd *cli.Command, c *packs.Composition, settings *packs.Settings, role string, declared packs.Role, model string) (*packs.AcceptScreen, error) {
	tasks := evals.RoleTasks(role, declared)
	if len(tasks) == 0 {
		return nil, withCode(exitRed, fmt.Errorf("locum roles accept: the role %s names no eval task locum has, so there is nothing to screen; --no-screen accepts without one", role))
	}
	res, results := e.runScreen(ctx, cmd, c, settings, model, "operator", tasks)
	// Only a screen that ran every task to a grade counts: red is a grade; a server error, a
	// timeout or a signal part way leaves tasks unjudged, and nothing is accepted.
	if len(results) < len(tasks) || (res.Error != nil && res.Error.Kind != "red") {
		fmt.Fprintln(e.stderr, res.ShortReceipt())
		msg := fmt.Sprintf("the screen graded %d of %d tasks", len(results), len(tasks))
		if res.Error != nil {
			msg += ": " + untrusted.EscapeLines(res.Error.Message)
		}
		code := res.ExitCode
		if code == 0 {
			code = exitCouldNot
		}
		return nil, withCode(code, fmt.Errorf("locum roles accept: %s; nothing accepted (--no-screen accepts without one)", msg))
	}
	printScreen(e.stdout, results)
	screen := &packs.AcceptScreen{}
	for _, r := range results {
		if r.Grade.Passed {
			screen.Passed = append(screen.Passed, r.Task)
		} else {
			screen.Failed = append(screen.Failed, r.Task)
		}
	}
	fmt.Fprintln(e.stderr, res.ShortReceipt())
	return screen, nil
}

func (e *env) rolesRevoke(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 1 {
		return usagef(cmd, "locum roles revoke takes ROLE")
	}
	role := cmd.Args().First()
	v, err := e.schemas()
	if err != nil {
		return err
	}
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum roles revoke: %w", err))
	}
	if err := packs.RevokeRole(v, dirs, role); err != nil {
		if errors.Is(err, packs.ErrNotAccepted) {
			return withCode(exitRed, fmt.Errorf("locum roles revoke: %s: %w", role, err))
		}
		return withCode(exitCouldNot, fmt.Errorf("locum roles revoke: %w", err))
	}
	fmt.Fprintf(e.stderr, "roles: revoked the model accepted for %s in %s\n", role, dirs.UserConfigFile())
	return nil
}

func (e *env) stdinIsTerminal() bool {
	f, ok := e.stdin.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
