package job

import (
	"context"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/ledger"
)

// The queries answer what a front end asks of the endpoint and the repository's journals without
// running a job: status, the ledger, one run's journal. Each gathers what it reports here, so the
// command line and a tool call answer alike; a front end parses its input and renders the answer.

// WorkspaceError is a workspace, one of its packs or the operator's user config that a query
// cannot read. It reads as the error it wraps.
type WorkspaceError struct{ Err error }

func (e *WorkspaceError) Error() string { return e.Err.Error() }
func (e *WorkspaceError) Unwrap() error { return e.Err }

// JournalsError is a folder of run journals a query cannot find. It reads as the error it wraps.
type JournalsError struct{ Err error }

func (e *JournalsError) Error() string { return e.Err.Error() }
func (e *JournalsError) Unwrap() error { return e.Err }

// workspace is Composition for a query, its error a *WorkspaceError.
func (l *Layer) workspace() (*packs.Composition, error) {
	c, err := l.Composition()
	if err != nil {
		return nil, &WorkspaceError{Err: err}
	}
	return c, nil
}

// runsDir is the folder of the repository's run journals, its error a *JournalsError.
func (l *Layer) runsDir() (string, error) {
	dir, err := engine.RunsDir(l.root)
	if err != nil {
		return "", &JournalsError{Err: err}
	}
	return dir, nil
}

// journalKey is the operator's key to check a journal's seal with; nil where there is none, and
// then no journal is sealed.
func (l *Layer) journalKey() []byte {
	key, _ := engine.JournalKey(l.op.Env, false)
	return key
}

// operatorSettings are the settings every mode shares, the operator's alone: what the host's
// prices and the journals' reading depend on, which no call's arguments set.
func (l *Layer) operatorSettings(c *packs.Composition) (*packs.Settings, error) {
	return c.ResolveCall("", l.op.Env, l.op.Flags, nil)
}

// Settings resolves mode's settings as a run of it would have them, without running one: the
// operator's flags and environment over the packs and the workspace, a tool call's args on top. A
// query that reads files as the mode would (locum symbols, reading as --symbol does) bounds its
// reads with them. A workspace that cannot be read is a *WorkspaceError.
func (l *Layer) Settings(mode string, args map[string]string) (*packs.Settings, error) {
	c, err := l.workspace()
	if err != nil {
		return nil, err
	}
	return c.ResolveCall(mode, l.op.Env, l.op.Flags, args)
}

// SymbolsMode is the mode whose input budget a read of files' declarations goes under (locum
// symbols, the symbols tool): the names it lists are --symbol's, whose spans a transform edits,
// and a file is read as that mode's prompt holding it would be.
const SymbolsMode = "transform"

// SymbolsBudget is the input budget a read of files' declarations goes under: SymbolsMode's, a
// tool call's args on top of the operator's.
func (l *Layer) SymbolsBudget(args map[string]string) (int64, error) {
	set, err := l.Settings(SymbolsMode, args)
	if err != nil {
		return 0, err
	}
	return set.Int(packs.MaxInputBytes), nil
}

// StatusRequest is what a status query asks beside the operator's settings.
type StatusRequest struct {
	// Tool says a tool call asks: its Args resolve on top of the operator's flags, and the models
	// it names are its arguments in the report.
	Tool bool
	Args map[string]string
	// Model is a chat model to look for among those the server lists; without it the report names
	// the model each role resolves to. EmbedModel is the embedding model to look for; without it,
	// the one a declared mode that asks an embedding model would use.
	Model, EmbedModel string
	// ArgName names a setting in the report's messages as the front end takes it; nil is the
	// command line's flags.
	ArgName func(setting string) string
}

// source names where a model the request names came from, as packs names a setting's source.
func (r StatusRequest) source(setting string) string {
	if r.Tool {
		return "argument " + setting
	}
	return "flag " + rails.FlagName(setting)
}

// Status asks the endpoint the settings name whether a server answers and what it lists, and
// reports with it the break-even a host decides on before it calls. A server that does not
// answer, or an endpoint the loopback rail refuses, is a report with Up false; an error is a
// workspace that cannot be read (*WorkspaceError) or a setting that does not resolve.
func (l *Layer) Status(ctx context.Context, req StatusRequest) (*engine.StatusReport, error) {
	c, err := l.workspace()
	if err != nil {
		return nil, err
	}
	set, err := c.ResolveCall("", l.op.Env, l.op.Flags, req.Args)
	if err != nil {
		return nil, err
	}
	var chat, embed *engine.ModelPresence
	if req.Model != "" {
		chat = &engine.ModelPresence{ID: req.Model, Source: req.source("model")}
	}
	if req.EmbedModel != "" {
		embed = &engine.ModelPresence{ID: req.EmbedModel, Source: req.source("embed_model")}
	} else {
		embed = l.defaultEmbedModel(c)
	}
	rep := engine.CheckEndpoint(ctx, set, routing.StatusModels(l.v, c, chat, embed))
	name := req.ArgName
	if name == nil {
		name = rails.FlagName
	}
	rep.Reword(name)
	var left ledger.Left
	rep.BreakEven, left = l.breakEven(c)
	rep.BreakEvenNote = left.Words()
	return rep, nil
}

// defaultEmbedModel is the embedding model the first declared mode that asks one (by its
// registration) would use, from its embed_model setting; nil where no declared mode asks one.
func (l *Layer) defaultEmbedModel(c *packs.Composition) *engine.ModelPresence {
	for _, name := range engine.RegisteredModes() {
		if m, _ := engine.LookupMode(name); m.Model != engine.EmbeddingModel || !c.Declares(name) {
			continue
		}
		s, err := c.Resolve(name, l.op.Env, nil)
		if err != nil {
			return nil
		}
		set, _ := s.Get(packs.EmbedModel)
		builtIn := set.Source == "default" || set.Source == "pack "+packs.DefaultPack
		return &engine.ModelPresence{ID: set.Value, Source: set.Source, BuiltIn: builtIn}
	}
	return nil
}

// BreakEven is the break-even of each mode and role from the repository's ledger, at the host's
// prices the operator's settings give, and what the ledger left out. A workspace or journals that
// cannot be read give none: the break-even advises a host, and never stops what asked for it.
func (l *Layer) BreakEven() ([]cost.Rule, ledger.Left) {
	c, err := l.Composition()
	if err != nil {
		return nil, ledger.Left{}
	}
	return l.breakEven(c)
}

func (l *Layer) breakEven(c *packs.Composition) ([]cost.Rule, ledger.Left) {
	set, err := l.operatorSettings(c)
	if err != nil {
		return nil, ledger.Left{}
	}
	dir, err := engine.RunsDir(l.root)
	if err != nil {
		return nil, ledger.Left{}
	}
	return ledger.DirBreakEven(dir, l.journalKey(), engine.HostParams(set))
}

// LedgerRequest is what a ledger query asks.
type LedgerRequest struct {
	// Filter keeps the runs summed; By is what they are summed by, one of ledger.Bys ("" sums by
	// mode).
	Filter ledger.Filter
	By     string
}

// LedgerResult is the ledger and what a front end may say beside it.
type LedgerResult struct {
	Report ledger.Report
	// Dir is the folder of the journals summed.
	Dir string
	// NoDirect is why the report has no direct cost measured by the A/B record's host arm; nil
	// where it has one, or where there is no record to measure it.
	NoDirect error
}

// Ledger sums the repository's journals sealed with the operator's key: what delegation saved or
// cost the host, at the host's prices the operator's settings give, measured from the host's own
// transcripts where the operator named their folder (no call does), with each mode and role's
// break-even. An error is a workspace that cannot be read (*WorkspaceError), journals that cannot
// be found (*JournalsError), or a setting or a sum that does not resolve.
func (l *Layer) Ledger(req LedgerRequest) (*LedgerResult, error) {
	c, err := l.workspace()
	if err != nil {
		return nil, err
	}
	set, err := l.operatorSettings(c)
	if err != nil {
		return nil, err
	}
	dir, err := l.runsDir()
	if err != nil {
		return nil, err
	}
	by := req.By
	if by == "" {
		by = "mode"
	}
	params := engine.HostParams(set)
	host := ledger.HostUsage{Folder: packs.TranscriptsFolder(set, l.op.Env), ToolListTokens: ledger.ToolListTokens(params)}
	f := req.Filter
	if f.Root == "" {
		f.Root = l.root
	}
	rep, err := ledger.BuildMeasured(dir, l.journalKey(), f, by, params, host)
	if err != nil {
		return nil, err
	}
	out := &LedgerResult{Report: rep, Dir: dir}
	if arm, err := evals.HostArmFor(l.v, c); err != nil {
		out.NoDirect = err
	} else {
		out.Report.Direct = arm.Ledger()
	}
	return out, nil
}

// RunJournal reads the journal of the run id names (its run id, or a unique prefix of it), its
// seal checked with the operator's key, bounded as engine.LoadJournal says. An error is journals
// that cannot be found (*JournalsError), or no one run the id names.
func (l *Layer) RunJournal(id string) (engine.RunJournal, error) {
	dir, err := l.runsDir()
	if err != nil {
		return engine.RunJournal{}, err
	}
	return engine.LoadRun(dir, id, l.journalKey())
}
