// Package job turns a front end's typed request into a run: it composes the workspace with the
// operator's user config, resolves the mode's settings (the operator's, then a tool call's, which
// may only narrow a rail), chooses the model, holds the job to its rails before any request, and
// hands the run to the engine. The CLI and the MCP server are adapters over it, so a request
// means the same, and is refused alike, from either.
package job

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// Operator is what the operator decided when starting a front end. Nothing a call says widens it.
type Operator struct {
	// Dir is the working directory: a job's relative paths resolve from it, and the repository
	// root is found from it.
	Dir string
	// Env reads the LOCUM_* environment and the user directories.
	Env packs.Lookup
	// Flags are the operator's setting flags, keyed by flag name without dashes, as
	// packs.Composition.Resolve takes them.
	Flags map[string]string
	// CallModels lets a tool call name a model (routing=operator). Without it a call runs only a
	// role's routing; the operator's own Model is always theirs to name.
	CallModels bool
	Version    string
	// Stderr receives warnings; nil discards them.
	Stderr io.Writer
}

// Layer runs jobs for one front end.
type Layer struct {
	op   Operator
	v    *schema.Validator
	root string
}

// New finds the repository root from op.Dir, once.
func New(op Operator, v *schema.Validator) (*Layer, error) {
	if op.Env == nil {
		op.Env = func(string) (string, bool) { return "", false }
	}
	if op.Stderr == nil {
		op.Stderr = io.Discard
	}
	root, err := packs.FindRoot(op.Dir)
	if err != nil {
		return nil, err
	}
	return &Layer{op: op, v: v, root: root}, nil
}

// Root is the repository root.
func (l *Layer) Root() string { return l.root }

// Composition reads the workspace, its packs and the operator's user config afresh: a server
// lives long, and the files may change under it.
func (l *Layer) Composition() (*packs.Composition, error) {
	c, err := packs.Compose(l.v, l.root)
	if err != nil {
		return nil, err
	}
	if dirs, err := packs.FindUserDirs(l.op.Env); err == nil {
		if c.User, err = packs.LoadUserConfig(l.v, dirs); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Call is what a front end asks beside the job itself.
type Call struct {
	// Tool says a tool call asks, not the operator: it names a model only where the operator
	// allowed it, its paths stay inside the repository, and its Args narrow a rail, never widen it.
	Tool bool
	// Model is a model named for the run; RoleGiven says the role setting was named by the
	// caller, not inherited from a pack's default.
	Model     string
	RoleGiven bool
	// Args are a tool call's own settings, keyed by setting.
	Args map[string]string
	// ArgName names a setting in a message as the front end takes it; nil is the command line's
	// flags.
	ArgName func(setting string) string
	// JournalPath overrides the journal file; Argv is what the journal records as the run's
	// arguments.
	JournalPath string
	Argv        []string
	Observer    engine.Observer
	Progress    io.Writer
	// BaseURL is the endpoint of the operator's pool of servers this job goes to, in place of
	// the one the settings name; "" keeps that one. It is the operator's choice, so it passes
	// the loopback rail as the operator's endpoint does, no further.
	BaseURL string
	// Parent names the workflow run this job is an item of.
	Parent *engine.ParentRun
	// Batch says the job is one item of a workflow: the host's one call is shared by all of
	// them, so the break-even of a call of its own does not gate it.
	Batch bool
}

// errCallModel refuses a tool call that names a model where the operator did not allow one.
var errCallModel = &engine.RefusalError{Reason: "this server runs the model a role is routed to, never one a call names: " +
	"the operator allows that when starting the server (the allow-model option of locum mcp). Name a role " +
	"(role: code or prose); a role with no routing is refused with the command the person runs to accept a model for it"}

// Prepared is a job's run with its settings resolved and its model chosen.
type Prepared struct {
	layer *Layer
	call  Call
	comp  *packs.Composition
	spec  engine.RunSpec
}

// Prepare resolves mode's settings for call and chooses its model. A refusal or a contradiction
// is an error engine.Classify decides on; the run has not begun.
func (l *Layer) Prepare(ctx context.Context, mode engine.Mode, call Call) (*Prepared, error) {
	if mode.Model == engine.ChatModel {
		if err := l.CheckCallModel(call); err != nil {
			return nil, err
		}
	}
	c, err := l.Composition()
	if err != nil {
		return nil, err
	}
	flags := l.op.Flags
	if call.BaseURL != "" {
		flags = maps.Clone(flags)
		if flags == nil {
			flags = map[string]string{}
		}
		flags[packs.BaseURL.Flag()] = call.BaseURL
	}
	set, err := c.ResolveCall(mode.Name, l.op.Env, flags, call.Args)
	if err != nil {
		return nil, err
	}
	spec := engine.RunSpec{Mode: mode.Name, Root: c.Root, Settings: set, ArgName: call.ArgName,
		JournalPath: call.JournalPath, Args: call.Argv, Version: l.op.Version, Stderr: l.op.Stderr,
		Observer: call.Observer, Progress: call.Progress, Parent: call.Parent, JournalKey: l.operatorKey}
	switch mode.Model {
	case engine.ChatModel:
		spec.Model, spec.Routing, err = routing.Choose(ctx, l.v, c, set, call.choice())
		if err != nil {
			return nil, err
		}
	case engine.EmbeddingModel:
		spec.Model = set.String(packs.EmbedModel)
	}
	return &Prepared{layer: l, call: call, comp: c, spec: spec}, nil
}

// CheckCallModel refuses a tool call that names a model where the operator did not allow one:
// Prepare does for a chat mode's job, and a job made of several (a workflow) asks before any.
func (l *Layer) CheckCallModel(call Call) error {
	if call.choice().Operator() && !l.op.mayNameModel(call) {
		return errCallModel
	}
	return nil
}

// choice is what call asks of the model choice.
func (c Call) choice() routing.Choice {
	return routing.Choice{Model: c.Model, RoleGiven: c.RoleGiven, Arg: c.ArgName}
}

// mayNameModel says who asks may name a model: the operator always, a tool call only where the
// operator allowed it.
func (op Operator) mayNameModel(call Call) bool { return !call.Tool || op.CallModels }

// NamedRouting is how a run of mode chooses the model call names, as a result reports it:
// "operator" where call names a chat model itself, with no role (routing.Choice.Operator), and may
// name one; "" where a role's routing chooses, or the mode asks no chat model. It is what Prepare
// would choose, for the result of a run that never began; the command line, whose caller is the
// operator, asks it of a zero Operator.
func (op Operator) NamedRouting(mode engine.Mode, call Call) string {
	if mode.Model == engine.ChatModel && call.choice().Operator() && op.mayNameModel(call) {
		return "operator"
	}
	return ""
}

// Settings are the run's resolved settings.
func (p *Prepared) Settings() *packs.Settings { return p.spec.Settings }

// Model and Routing are the model chosen and how.
func (p *Prepared) Model() string   { return p.spec.Model }
func (p *Prepared) Routing() string { return p.spec.Routing }

// Check holds j to the rails a run checks before it begins: its task within the input budget,
// and a tool call's paths inside the repository.
func (p *Prepared) Check(j engine.Job) error {
	if t, ok := j.(engine.TaskedJob); ok {
		what, text := t.TaskText()
		if what == "" {
			what = "the task"
		}
		if limit := p.spec.Settings.Int(packs.MaxInputBytes); int64(len(text)) > limit {
			return &rails.BudgetError{What: what, Size: int64(len(text)), Limit: limit, Remedy: "shorten the task"}
		}
	}
	if pj, ok := j.(engine.PathsJob); ok && p.call.Tool {
		for _, np := range pj.Paths() {
			path := np.Path
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.layer.op.Dir, path)
			}
			// The path must be inside the repository as named, not only once resolved: a link
			// from outside could be pointed elsewhere between this check and the read, while
			// the mode confines a path named inside again when it reads it.
			outside := !untrusted.Inside(p.layer.root, path)
			if !outside {
				_, err := untrusted.Confine(p.layer.root, path)
				var out *untrusted.ConfineError
				outside = errors.As(err, &out)
			}
			if outside {
				return engine.Refusalf("{%s} %s: outside the repository; a call reads this repository's files only", np.Arg, untrusted.Escape(np.Path))
			}
		}
	}
	return nil
}

// Run checks j (Check) and runs it under ctx. A refusal before the run is an error and no
// result; every run that began ends in its one result.
func (p *Prepared) Run(ctx context.Context, j engine.Job) (*engine.Result, error) {
	return p.RunIn(ctx, j, "")
}

// RunIn is Run with the job placed in tree, a worktree of the repository (its paths resolve
// from tree's root), while its journal stays the repository's; "" is the repository itself.
func (p *Prepared) RunIn(ctx context.Context, j engine.Job, tree string) (*engine.Result, error) {
	if err := p.Check(j); err != nil {
		return nil, err
	}
	root, cwd := p.comp.Root, p.layer.op.Dir
	if tree != "" {
		root, cwd = tree, tree
	}
	place := engine.Place{Root: root, Cwd: cwd, Settings: p.spec.Settings,
		RollbackKey: func() []byte { return p.layer.rollbackKey(p.spec.Mode) },
		OperatorKey: p.layer.operatorKey}
	if dirs, err := packs.FindUserDirs(p.layer.op.Env); err == nil {
		place.CacheDir = dirs.Cache
	}
	if s := p.spec.Settings; s.String(packs.DelegateWhen) == "pays" && !p.call.Batch {
		place.PayGate = func(lines int) error { return payGate(p.comp.Root, p.layer.op.Env, p.spec, lines) }
		place.WorkflowGate = func(mode string, items, files int) error {
			return workflowGate(p.comp.Root, p.layer.op.Env, p.spec, mode, items, files)
		}
	}
	return engine.Execute(ctx, p.spec, j.Steps(place)), nil
}

// rollbackKey is the operator's key for crash records, made on first use; nil, with a warning,
// when there is none to be had: the in-process restore still protects the file.
func (l *Layer) rollbackKey(mode string) []byte {
	key, err := l.operatorKey()
	if err == nil {
		return key
	}
	fmt.Fprintf(l.op.Stderr, "locum %s: warning: no crash record will be kept (%v); the file is still restored on every exit this process sees\n", mode, err)
	return nil
}

// operatorKey is the operator's secret in the user state directory, made on first use: what
// locum writes in a repository for itself to read back is authenticated with it, since the
// repository could have written the same file.
func (l *Layer) operatorKey() ([]byte, error) {
	dirs, err := packs.FindUserDirs(l.op.Env)
	if err != nil {
		return nil, err
	}
	return rails.LoadRollbackKey(dirs.State, true)
}

// NotStarted is the result of a job refused before its run began, in the front end's words. It
// names the model a call named as the operator's choice only where the operator lets a call name
// one.
func (l *Layer) NotStarted(mode engine.Mode, call Call, err error) *engine.Result {
	_, _, code := engine.Classify(err)
	res := engine.NotStarted(mode.Name, call.Model, l.op.NamedRouting(mode, call), code, err)
	res.Error.Message = engine.Reword(res.Error.Message, err, call.ArgName)
	return res
}

// Validator is the schema validator the layer reads the workspace with.
func (l *Layer) Validator() *schema.Validator { return l.v }

// SetHost gives the run the front end's side of the host's cost (engine.HostSide).
func (p *Prepared) SetHost(h *engine.HostSide) { p.spec.Host = h }

// payGate holds a job of lines span lines to its mode, role and model's break-even, from the
// ledger of the repository's journals sealed with the operator's key: a journal that cannot be
// read leaves the job to go ahead, since the gate saves the host tokens and must never stop work
// for want of a history.
func payGate(root string, env packs.Lookup, spec engine.RunSpec, lines int) error {
	dir, err := engine.RunsDir(root)
	if err != nil {
		return nil
	}
	key, _ := engine.JournalKey(env, false)
	s := spec.Settings
	return ledger.GateFor(dir, key, spec.Mode, s.String(packs.RoleSetting), spec.Model, lines, engine.GateParams(s))
}

// workflowGate holds a workflow call to its own break-even: its first step's items of mode over
// files files, at the keep rate its items had on the ledger (or the mode's prior), the same way.
func workflowGate(root string, env packs.Lookup, spec engine.RunSpec, mode string, items, files int) error {
	dir, err := engine.RunsDir(root)
	if err != nil {
		dir = ""
	}
	key, _ := engine.JournalKey(env, false)
	m, _ := engine.LookupMode(mode)
	s := spec.Settings
	return ledger.WorkflowGate(dir, key, mode, s.String(packs.RoleSetting), spec.Model, m.EditsInPlace, items, files, engine.GateParams(s))
}
