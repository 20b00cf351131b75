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

	"github.com/locumdev/locum/bench"
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
		&cli.StringFlag{Name: "from-bench", Usage: "accept from the bench of this run id (locum bench) in place of a screen: its figures for MODEL and the weights it ran are recorded"},
	}
	acceptFlags = localFlags(append(acceptFlags, settingFlags("eval")...))
	return &cli.Command{
		Name:      "roles",
		Category:  groupInspect,
		Usage:     "who may do what: each role's routing now; accept or revoke a model for a role",
		UsageText: "locum roles [--json] | locum roles accept ROLE MODEL [--yes] [--no-screen | --from-bench RUN_ID] | locum roles revoke ROLE",
		Description: "A role runs a model only when it resolves: earned (a signed A/B record's routing, locum eval),\n" +
			"operator (a model the operator accepted with locum roles accept), or none.\n" +
			"locum roles accept screens MODEL on the role's eval tasks, prints the table, and on your\n" +
			"confirmation writes roles.ROLE to your user config (never to the repository). A screen that\n" +
			"fails still lets you accept, after a warning naming what failed. With --from-bench RUN_ID, a\n" +
			"bench you ran (locum bench) stands in for the screen: the model's row of its table and the\n" +
			"weights it ran are recorded, and the server must serve those weights still.",
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
				UsageText: "locum roles accept ROLE MODEL [--yes] [--no-screen | --from-bench RUN_ID]",
				Metadata: helpOf(commandHelp{
					examples: []string{
						"locum roles accept code qwen2.5-coder:7b",
						"locum roles accept agent qwen3-coder-30b --no-screen --yes",
						"locum roles accept code qwen2.5-coder-1.5b-instruct --from-bench 20261204T201530Z-5c1f0e",
					},
					exits: exitWords{
						done:     "accepted: the user config names the model for the role",
						red:      "not accepted, or the screen was refused before any request, or the bench (--from-bench) did not run the model, ran it on other weights than the server's, or is not one this operator's locum sealed; nothing written",
						couldNot: "could not run: the screen or the server could not be asked, or the bench's journal is not there",
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
	fromBench := cmd.String("from-bench")
	if fromBench != "" && cmd.Bool("no-screen") {
		return usagef(cmd, "--from-bench stands in for the screen already: give no --no-screen")
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
	var benched *bench.Row
	if fromBench != "" {
		row, err := e.benchRow(c.Root, fromBench, model, &accepted)
		if err != nil {
			return err
		}
		benched = &row
	}
	settings, err := e.resolve(cmd, c, "eval")
	if err != nil {
		return err
	}
	weights, err := engine.IdentifyModel(ctx, settings, model)
	var notListed *engine.ModelNotListedError
	switch {
	case errors.As(err, &notListed):
		return withCode(exitRed, fmt.Errorf("locum roles accept: %s; nothing accepted", untrusted.EscapeLines(err.Error())))
	case err != nil && benched != nil:
		fmt.Fprintf(e.stderr, "roles: warning: the server could not be asked (%s), so the weights recorded are the ones the bench ran\n", untrusted.EscapeLines(err.Error()))
	case benched != nil && weights != "" && benched.Weights != "" && weights != benched.Weights:
		return withCode(exitRed, fmt.Errorf("locum roles accept: the server serves %s as %s now, not the %s bench %s measured; nothing accepted (bench it again)",
			untrusted.Escape(model), untrusted.Escape(weights), untrusted.Escape(benched.Weights), accepted.Bench.Run))
	case err != nil && !cmd.Bool("no-screen"):
		return withCode(exitCouldNot, fmt.Errorf("locum roles accept: %s; nothing accepted (locum status says more)", untrusted.EscapeLines(err.Error())))
	case err != nil:
		fmt.Fprintf(e.stderr, "roles: warning: the server could not be asked (%s), so nothing says which weights %s is\n", untrusted.EscapeLines(err.Error()), untrusted.Escape(model))
	case weights != "":
		accepted.Weights = weights
		fmt.Fprintf(e.stderr, "roles: %s is %s, as the server describes it\n", untrusted.Escape(model), untrusted.Escape(weights))
	}
	switch {
	case benched != nil:
		if err := bench.WriteTable(e.stdout, []bench.Row{*benched}, false); err != nil {
			return err
		}
		fmt.Fprintf(e.stderr, "roles: accepting %s for %s from bench %s, in place of a screen\n", untrusted.Escape(model), role, accepted.Bench.Run)
	case cmd.Bool("no-screen"):
		accepted.Screen = &packs.AcceptScreen{Skipped: true}
		fmt.Fprintf(e.stderr, "roles: accepting %s for %s without a screen\n", model, role)
	default:
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

// benchRow is model's row of the bench run id, from its journal in the repository at root, which
// only counts where its seal holds under the operator's key; it fills the acceptance's bench and
// weights from it. A bench that ran the model on two sets of weights says nothing of either.
func (e *env) benchRow(root, id, model string, accepted *packs.AcceptedRole) (bench.Row, error) {
	rec, err := bench.ReadRecord(root, id, e.journalKey())
	if err != nil {
		_, _, code := engine.Classify(err)
		return bench.Row{}, withCode(code, fmt.Errorf("locum roles accept --from-bench: %s; nothing accepted", untrusted.EscapeLines(err.Error())))
	}
	row, ok := rec.Row(model)
	if !ok || row.Cells == 0 {
		var ran []string
		for _, r := range rec.Details.Rows {
			ran = append(ran, untrusted.Escape(r.Model))
		}
		return bench.Row{}, withCode(exitRed, fmt.Errorf("locum roles accept --from-bench: bench %s ran no cell of %s (it ran %s); nothing accepted", rec.RunID, untrusted.Escape(model), strings.Join(ran, ", ")))
	}
	if strings.Contains(row.Weights, bench.WeightsSeparator) {
		return bench.Row{}, withCode(exitRed, fmt.Errorf("locum roles accept --from-bench: bench %s ran %s on more than one set of weights (%s); nothing accepted", rec.RunID, untrusted.Escape(model), untrusted.Escape(row.Weights)))
	}
	accepted.Weights = row.Weights
	accepted.Bench = &packs.AcceptBench{Run: rec.RunID, Tasks: len(rec.Details.Tasks), Cells: row.Cells, Kept: row.Kept, Fixed: row.Fixed, Held: row.Held,
		Red: row.Red, Refused: row.Refused, Errors: row.Errors, Right: row.Right, Judged: row.Judged, WallP50Ms: row.WallP50Ms, WallP90Ms: row.WallP90Ms,
		TTFTms: row.TTFTms, Rate: row.Rate, InTokens: row.InTokens, OutTokens: row.OutTokens}
	if row.Saved != nil {
		accepted.Bench.SavedUSD = &row.Saved.USD
	}
	return row, nil
}
