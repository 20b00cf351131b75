package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/atomicfile"
	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
	"github.com/locumdev/locum/verify"
)

func (e *env) evalCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "model", Usage: "the local model: the screen's candidate, or arm L's model for every role"},
		&cli.StringFlag{Name: "role", Usage: "screen the model this role's earned routing names, on the role's tasks"},
		&cli.BoolFlag{Name: "ab", Usage: "capture an A/B record: k turns per task for the local model (arm L) and the host agent (arm H)"},
		&cli.StringFlag{Name: "seed", Usage: "the capture's seed; each local turn's sampling seed derives from it (required with --ab)"},
		&cli.StringFlag{Name: "host-cmd", Usage: "the host agent's command, split on whitespace with no shell; the prompt is its last argument"},
		&cli.StringFlag{Name: "host-model", Usage: "the host's model, recorded as declared (required with --ab)"},
		&cli.StringSliceFlag{Name: "role-model", Usage: "arm L's model for one role, ROLE=ID (repeatable; overrides --model for that role)"},
		&cli.StringFlag{Name: "name", Value: evals.DefaultRecord, DefaultText: evals.DefaultRecord, Usage: "the record's name: .locum/evals/ab/NAME.json"},
		&cli.DurationFlag{Name: "turn-timeout", Value: 10 * time.Minute, DefaultText: "10m", Usage: "the most one host turn may take"},
		&cli.StringFlag{Name: "sign-key", Usage: "the ed25519 key that signs the record and routing (env LOCUM_SIGNING_KEY); locum eval keygen makes one"},
		&cli.BoolFlag{Name: "write", Usage: "write .locum/routing.json (signed) and the register from a record that verifies"},
		&cli.BoolFlag{Name: "verify", Usage: "check the record, its register and the routing without running any model"},
		&cli.BoolFlag{Name: "all", Usage: "with --verify: the rails' offline checks, every record under .locum/evals/ab and the routing the workspace ships (the ab-run recipe)"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal of a screen, or of a capture's local arm, to this file"},
		&cli.BoolFlag{Name: "json", Usage: "print a screen's result as one JSON object on stdout"},
	}
	flags = localFlags(append(flags, settingFlags("eval")...))
	return &cli.Command{
		Name:     "eval",
		Category: groupSetUp,
		Usage:    "screen a model, capture signed A/B records that earn roles their routing, and check them",
		Description: "locum eval --model ID            screen: one sample per task, graded; earns nothing\n" +
			"locum eval --ab --k 5 --seed S --host-cmd CMD --host-model ID [--write]\n" +
			"                                 capture k turns per task and arm, sign the record, and with\n" +
			"                                 --write route the roles it earns (.locum/routing.json)\n" +
			"locum eval --verify [--name N]   check a record with no model: exit 1 on any finding, 2 if missing\n" +
			"locum eval --verify --all        what CI runs (locum verify tools/local-llm:ab-run): the rails'\n" +
			"                                 offline checks, every record, and the routing against the record\n" +
			"                                 it names; every check runs, a could-not-run (2) outranks a red (1)\n" +
			"locum eval --write [--name N]    re-render the register and routing from a record that verifies\n\n" +
			"A task qualifies when all k local turns pass and all k host turns complete with local passes at\n" +
			"least host passes; a role is enabled when every task it names qualifies.",
		UsageText: "locum eval [--model ID | --role R] | --ab ... | --verify [--all] | --write",
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum eval --model qwen2.5-coder:7b`,
				`locum eval --ab -k 5 --seed 42 --model qwen2.5-coder:7b --host-model claude-sonnet-4-5 --host-cmd "claude -p --output-format json" --sign-key signing.key --write`,
				`locum eval --verify --name local-worker`,
			},
			exits: exitWords{
				done: "a screen or a capture ran, a record holds (--verify) and was written (--write), or every check " +
					"is green (--verify --all)",
				red: "a red screen, a record with a finding (--verify), a red check (--verify --all: a rail, a record, " +
					"the routing), or a refusal (a --write from a record that does not hold, an --ab host command that " +
					"turns its permission checks off)",
				couldNot: "the record is missing (--verify; with --all, the one the routing names), a check that could " +
					"not run (--verify --all, which outranks a red one), an --ab capture without --host-cmd, --seed or " +
					"--host-model (a command line it cannot run, where a host command it refuses is 1)",
			},
		}),
		Flags:        flags,
		OnUsageError: onUsageError,
		Commands:     []*cli.Command{e.keygenCommand()},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			switch {
			case cmd.Bool("all") && !cmd.Bool("verify"):
				return usagef(cmd, "--all goes with --verify: locum eval --verify --all")
			case cmd.Bool("all") && cmd.IsSet("name"):
				return usagef(cmd, "--verify --all checks every record; it does not take --name")
			case cmd.Bool("verify") && (cmd.Bool("ab") || cmd.Bool("write")):
				return usagef(cmd, "--verify checks; it does not combine with --ab or --write")
			case cmd.Bool("json") && (cmd.Bool("verify") || cmd.Bool("ab") || cmd.Bool("write")):
				return usagef(cmd, "--json prints a screen's result; --verify, --ab and --write print text")
			case cmd.Bool("all"):
				return e.evalVerifyAll(ctx)
			case cmd.Bool("verify"):
				return e.evalVerify(cmd)
			case cmd.Bool("ab"):
				return e.evalAB(ctx, cmd)
			case cmd.Bool("write"):
				return e.evalWrite(cmd)
			}
			return e.evalScreen(ctx, cmd)
		},
	}
}

func (e *env) keygenCommand() *cli.Command {
	return &cli.Command{
		Name:      "keygen",
		Usage:     "make an ed25519 signing key: FILE (mode 0600) and FILE.pub, the line trust.keys lists",
		UsageText: "locum eval keygen --out FILE",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum eval keygen --out ~/.config/locum/signing.key",
			"locum eval keygen --out signing.key",
		}}),
		Flags:        []cli.Flag{&cli.StringFlag{Name: "out", Usage: "where to write the private key (required); the public key goes to FILE.pub"}},
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			out := cmd.String("out")
			if out == "" {
				return usagef(cmd, "--out is required")
			}
			pub, err := evals.GenerateKey(out)
			if err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum eval keygen: %w", err))
			}
			fmt.Fprintf(e.stdout, "%s\n", pub)
			fmt.Fprintf(e.stderr, "wrote %s (keep it private) and %s.pub; add the line above to trust.keys in .locum/workspace.json (for eval --verify), and set signing_key in your user config so routing it signs runs here\n", out, out)
			return nil
		},
	}
}

// evalContext is what every eval command needs from the workspace.
func (e *env) evalContext() (*schema.Validator, *packs.Composition, []string, error) {
	v, c, err := e.workspace()
	if err != nil {
		return nil, nil, nil, err
	}
	var trust []string
	if c.Workspace != nil {
		trust = c.Workspace.Trust.Keys
	}
	return v, c, trust, nil
}

func (e *env) evalVerify(cmd *cli.Command) error {
	v, c, trust, err := e.evalContext()
	if err != nil {
		return err
	}
	ver, err := evals.VerifyRecord(v, c.Root, cmd.String("name"), trust, c.Roles(), true)
	if err != nil {
		var missing *evals.MissingRecordError
		if errors.As(err, &missing) {
			return withCode(exitCouldNot, fmt.Errorf("locum eval --verify: %w", err))
		}
		return err
	}
	return e.reportVerification(cmd.String("name"), ver)
}

// evalVerifyAll checks the workspace's A/B evidence as the ab-run recipe does: the rails'
// offline checks, every record, the shipped routing, one line each, the exit code folding all.
func (e *env) evalVerifyAll(ctx context.Context) error {
	v, c, trust, err := e.evalContext()
	if err != nil {
		return err
	}
	rep, err := verify.ABRun(ctx, verify.ABInput{Validator: v, Root: c.Root, Trust: trust, Roles: c.Roles()}, e.stdout)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum eval --verify --all: %w", err))
	}
	code := rep.ExitCode()
	if code == 0 {
		return nil
	}
	var names []string
	for _, r := range rep.Results {
		if r.Verdict() != verify.Green {
			names = append(names, r.Name)
		}
	}
	return withCode(code, fmt.Errorf("locum eval --verify --all: not green: %s", strings.Join(names, ", ")))
}

// report prints the findings and the routing a record derives; any failure is exit 1.
func (e *env) reportVerification(name string, ver *evals.Verification) error {
	fails := 0
	for _, f := range ver.Findings {
		if f.Fail {
			fails++
			fmt.Fprintf(e.stdout, "FAIL %s\n", untrusted.Escape(f.Text))
		} else {
			fmt.Fprintf(e.stdout, "note %s\n", untrusted.Escape(f.Text))
		}
	}
	if ver.Record != nil {
		e.printRoutes(ver.Routing)
		if ver.HostCost != nil {
			for _, c := range ver.HostCost.Tasks {
				fmt.Fprintf(e.stdout, "host arm, task %s: %s\n", c.Tasks[0], c)
			}
		}
		fmt.Fprintf(e.stdout, "eval --verify: record %s: %d turns, k=%d, %d findings\n", name, len(ver.Record.Turns), ver.Record.K, fails)
	}
	if fails > 0 {
		return withCode(exitRed, fmt.Errorf("locum eval --verify: the record %s does not hold (%d findings); no routing may rest on it", name, fails))
	}
	return nil
}

func (e *env) printRoutes(routes map[string]evals.RoutedRole) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	for _, n := range sortedKeys(routes) {
		r := routes[n]
		if r.Enabled {
			fmt.Fprintf(w, "role %s\tenabled\t%s at effort %s\n", n, untrusted.Escape(r.Model), r.Effort)
		} else {
			fmt.Fprintf(w, "role %s\tdisabled\t%s\n", n, untrusted.Escape(r.Reason))
		}
	}
	w.Flush()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// signingKey loads the key that signs records and routing: --sign-key, else LOCUM_SIGNING_KEY,
// else the user config's signing_key.
func (e *env) signingKey(cmd *cli.Command) (ed25519.PrivateKey, error) {
	file := cmd.String("sign-key")
	if file == "" {
		file, _ = e.lookup("LOCUM_SIGNING_KEY")
	}
	if file == "" {
		if v, err := e.schemas(); err == nil {
			cfg, err := e.userConfig(v)
			if err != nil {
				return nil, withCode(exitCouldNot, err)
			}
			file = cfg.SigningKeyPath(e.lookup)
		}
	}
	if file == "" {
		return nil, usagef(cmd, "--sign-key (or LOCUM_SIGNING_KEY, or signing_key in the user config) is required: records and routing are signed; locum eval keygen --out FILE makes a key")
	}
	key, err := evals.LoadPrivateKey(file)
	if err != nil {
		return nil, withCode(exitCouldNot, fmt.Errorf("locum eval: %w", err))
	}
	return key, nil
}

// untrustedKey says which key the workspace does not trust and where to trust it.
func untrustedKey(key ed25519.PrivateKey) string {
	return fmt.Sprintf("the signing key %s is not in trust.keys of %s, so every command would refuse the routing it signs; add that line to trust.keys, or sign with a key listed there",
		evals.FormatPublicKey(key.Public().(ed25519.PublicKey)), packs.WorkspaceFile)
}

func signWith(key ed25519.PrivateKey) func(map[string]any) error {
	return func(doc map[string]any) error { return evals.Sign(doc, key) }
}

func (e *env) evalWrite(cmd *cli.Command) error {
	key, err := e.signingKey(cmd)
	if err != nil {
		return err
	}
	v, c, trust, err := e.evalContext()
	if err != nil {
		return err
	}
	if !evals.Trusts(trust, key) {
		return withCode(exitRed, fmt.Errorf("locum eval --write: refusing: %s", untrustedKey(key)))
	}
	name := cmd.String("name")
	ver, err := evals.VerifyRecord(v, c.Root, name, trust, c.Roles(), false)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum eval --write: %w", err))
	}
	if ver.Failed() {
		_ = e.reportVerification(name, ver)
		return withCode(exitRed, fmt.Errorf("locum eval --write: refusing to write from a record that --verify fails"))
	}
	if ver.Record.K < evals.EarnK {
		return withCode(exitRed, fmt.Errorf("locum eval --write: refusing to route from %s: %w", name, &evals.ThinRecordError{K: ver.Record.K}))
	}
	if err := atomicfile.Write(evals.RegisterPath(c.Root, name), evals.RenderRegister(ver.Record, c.Roles()), 0o644); err != nil {
		return err
	}
	if err := evals.WriteRouting(c.Root, name, ver.Routing, signWith(key)); err != nil {
		return err
	}
	e.printRoutes(ver.Routing)
	fmt.Fprintf(e.stdout, "wrote %s and %s\n", relPath(c.Root, evals.RegisterPath(c.Root, name)), evals.RoutingFile)
	return nil
}

func relPath(root, p string) string {
	if strings.HasPrefix(p, root+string(os.PathSeparator)) {
		return p[len(root)+1:]
	}
	return p
}

func (e *env) evalAB(ctx context.Context, cmd *cli.Command) error {
	if cmd.String("host-cmd") == "" {
		return usagef(cmd, "--host-cmd is required with --ab: arm H is the host agent, and nothing is contacted until you name it")
	}
	host, err := evals.ParseHostCommand(cmd.String("host-cmd"))
	if err != nil {
		_, _, code := engine.Classify(err)
		return withCode(code, fmt.Errorf("locum eval --ab: %w", err))
	}
	if cmd.String("seed") == "" {
		return usagef(cmd, "--seed is required with --ab: a whole number every local turn's seed derives from")
	}
	// ParseInt reads the whole value: "42x" and "4 2" are refused, never read as 42 and 4.
	seed, err := strconv.ParseInt(cmd.String("seed"), 10, 64)
	if err != nil {
		return usagef(cmd, "--seed %q is not a whole number", cmd.String("seed"))
	}
	if cmd.String("host-model") == "" {
		return usagef(cmd, "--host-model is required with --ab: the record names the host's model as you declare it")
	}
	key, err := e.signingKey(cmd)
	if err != nil {
		return err
	}
	_, c, trust, err := e.evalContext()
	if err != nil {
		return err
	}
	settings, err := e.resolve(cmd, c, "eval")
	if err != nil {
		return err
	}
	if k := int(settings.Int(packs.K)); cmd.Bool("write") && k < evals.EarnK {
		return withCode(exitRed, fmt.Errorf("locum eval --ab --write: refusing before any turn: %w; drop --write to capture k=%d as exploration, which earns nothing", &evals.ThinRecordError{K: k}, k))
	}
	if !evals.Trusts(trust, key) {
		if cmd.Bool("write") {
			return withCode(exitRed, fmt.Errorf("locum eval --ab --write: refusing before any turn: %s", untrustedKey(key)))
		}
		fmt.Fprintf(e.stderr, "locum eval --ab: note: %s; the record will not verify until it does\n", untrustedKey(key))
	}
	models, err := armModels(cmd, c.Roles())
	if err != nil {
		return err
	}
	rec, err := evals.Capture(ctx, evals.CaptureOptions{
		Name: cmd.String("name"), K: int(settings.Int(packs.K)), Seed: seed, Host: host, HostModel: cmd.String("host-model"),
		Models: models, TurnTimeout: cmd.Duration("turn-timeout"), Root: c.Root, Roles: c.Roles(), Key: key,
		Version: version(), BinarySHA: evals.BinarySHA256(), Log: logAboveProgress{e},
		Local: engine.RunSpec{Settings: settings, JournalPath: cmd.String("journal"), Args: cmd.Args().Slice(), Version: version(),
			Stderr: e.stderr, Observer: e.observer(cmd), JournalKey: e.sealKey},
	})
	e.stopProgress()
	if err != nil {
		_, kind, code := engine.Classify(err)
		switch kind {
		case "signal", "timeout", "no_server", "loading":
			// Only a stop the next run need not repeat is resumable: a refusal would be refused again.
			return withCode(code, fmt.Errorf("locum eval --ab: %w; the journal keeps every finished turn, and the same command resumes", err))
		}
		return withCode(code, fmt.Errorf("locum eval --ab: %w", err))
	}
	fmt.Fprintf(e.stdout, "wrote %s and %s\n", relPath(c.Root, evals.RecordPath(c.Root, rec.Name)), relPath(c.Root, evals.RegisterPath(c.Root, rec.Name)))
	routes := evals.DeriveRoles(rec, c.Roles())
	e.printRoutes(routes)
	if cmd.Bool("write") {
		if err := evals.WriteRouting(c.Root, rec.Name, routes, signWith(key)); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", evals.RoutingFile)
	}
	return nil
}

// armModels maps each role to arm L's model: --role-model ROLE=ID, else --model.
func armModels(cmd *cli.Command, roles map[string]packs.Role) (map[string]string, error) {
	models := map[string]string{}
	for _, rm := range cmd.StringSlice("role-model") {
		role, model, ok := strings.Cut(rm, "=")
		if !ok || model == "" {
			return nil, usagef(cmd, "--role-model %q: want ROLE=ID", rm)
		}
		if _, known := roles[role]; !known {
			return nil, usagef(cmd, "--role-model %q: no role %q in the composed packs", rm, role)
		}
		models[role] = model
	}
	for name := range roles {
		if models[name] == "" {
			if cmd.String("model") == "" {
				return nil, usagef(cmd, "no local model for role %s: give --model ID or --role-model %s=ID", name, name)
			}
			models[name] = cmd.String("model")
		}
	}
	return models, nil
}

func (e *env) evalScreen(ctx context.Context, cmd *cli.Command) error {
	_, c, _, err := e.evalContext()
	if err != nil {
		return err
	}
	settings, err := e.resolve(cmd, c, "eval")
	if err != nil {
		return err
	}
	tasks := evals.Tasks()
	model, routing := cmd.String("model"), "operator"
	if role := cmd.String("role"); role != "" {
		declared, ok := c.Roles()[role]
		if !ok {
			return withCode(exitCouldNot, fmt.Errorf("locum eval: no role %q in the composed packs", role))
		}
		tasks = evals.RoleTasks(role, declared)
		if model, routing, err = e.chooseModelForRole(ctx, cmd, c, role, settings); err != nil {
			return err
		}
	} else if model == "" {
		return usagef(cmd, "the screen needs a model: --model ID, or --role R for a role's earned model")
	}
	res, results := e.runScreen(ctx, cmd, c, settings, model, routing, tasks)
	if !cmd.Bool("json") && len(results) > 0 {
		printScreen(e.stdout, results)
		fmt.Fprintln(e.stdout, "a screen has no baseline arm: it earns no routing (locum eval --ab does)")
	}
	return e.finish(cmd, res, nil)
}

// runScreen runs the screen of tasks on model, with progress, and returns its result and grades.
func (e *env) runScreen(ctx context.Context, cmd *cli.Command, c *packs.Composition, settings *packs.Settings, model, routing string, tasks []evals.Task) (*engine.Result, []evals.ScreenResult) {
	var results []evals.ScreenResult
	spec := engine.RunSpec{Mode: "eval", Root: c.Root, Settings: settings, Model: model, Routing: routing,
		JournalPath: cmd.String("journal"), Version: version(), Stderr: e.stderr, Observer: e.observer(cmd), JournalKey: e.sealKey}
	res := engine.Execute(ctx, spec, evals.ScreenSteps(tasks, &results))
	e.stopProgress()
	return res, results
}

// printScreen is a screen's table: each task, whether it passed, and its last piece of evidence.
func printScreen(out io.Writer, results []evals.ScreenResult) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TASK\tPASSED\tEVIDENCE")
	for _, r := range results {
		last := ""
		if n := len(r.Grade.Evidence); n > 0 {
			last = r.Grade.Evidence[n-1]
		}
		fmt.Fprintf(w, "%s\t%v\t%s\n", r.Task, r.Grade.Passed, untrusted.Escape(last))
	}
	w.Flush()
}
