package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
)

// ModelKind is the model a mode's runs ask.
type ModelKind int

const (
	// NoModel: the mode asks no model server.
	NoModel ModelKind = iota
	// ChatModel: the model a role's routing earned, or the one the operator named.
	ChatModel
	// EmbeddingModel: the model the mode's embed_model setting names.
	EmbeddingModel
)

// Mode is one kind of work, as its package registers it. Everything a layer above the modes
// decides about a mode comes from here, so none of them compares a mode's name.
type Mode struct {
	// Name is the mode's name: its command, its tool, the key of its settings and journals.
	Name string
	// Model is the model its runs ask.
	Model ModelKind
	// EditsInPlace says the run edits the file its scope event names, in the user's tree.
	EditsInPlace bool
	// Settings are the declared settings the mode takes beyond those every mode takes (the
	// endpoint, timeout, max_input_bytes): its flags, its tool's arguments and what a pack may set
	// for it.
	Settings []packs.Key
	// Outcome, when set, words a run's result in one line for a person or a host, after the
	// run and before the receipt: what it did and where (Result.Outcome).
	Outcome func(*Result) string
	// Counts is what the receipt calls its requests: "attempts" at one answer (the default), or
	// "requests" where each is a batch of one job (dedup's embedding batches).
	Counts string
	// Prior is the host-cost history assumed for the mode's runs until the ledger has some, and
	// Unit what its break-even counts ("span lines"); a zero Prior has no break-even by size.
	Prior cost.History
	Unit  string
	// Step, when set, makes the mode one a workflow step may run: it builds one item's job from
	// what the step gives it, reading StepInputs alone (StepItem.Input). It only builds the job:
	// RegisterMode calls it once, every input given, to hold it to the inputs it declares.
	Step func(StepItem) (StepJob, error)
	// StepInputs are the keys a step's `with` may give the mode: the one declaration the pack
	// schema's step part, spec/pack.md's list and a workflow's refusal of another key are made
	// from.
	StepInputs []packs.StepInput
	// Measures says its runs measure models rather than do a host's work (a bench): no host
	// would have done that work itself, so the ledger, the break-even and the gates leave them
	// out, saying how many.
	Measures bool
	// Tool, when set, makes the mode a tool a host calls (locum mcp).
	Tool *Tool
}

// StepItem is what a workflow step gives the job of one of its items. Only BuildStep makes one,
// and a Step reads it through Input alone, so a Step reads no key its mode does not declare.
type StepItem struct {
	inputs []packs.StepInput
	// with are the step's inputs, expanded for the item; vars the item's own names (item, file,
	// symbol or line, as its list gives them).
	with, vars map[string]string
	// verify is the workflow's verify expanded for the item, which a verify input takes when the
	// step gives none of its own.
	verify string
	// undeclared collects the keys Step asked for that its mode does not declare.
	undeclared *[]string
}

// Input is the value of the step input name: the step's, else the item's value the input
// defaults to, else (a verify input) the workflow's verify, else "". Asking for a key the mode
// does not declare gives "" and fails the build (BuildStep).
func (s StepItem) Input(name string) string {
	i := slices.IndexFunc(s.inputs, func(in packs.StepInput) bool { return in.Name == name })
	if i < 0 {
		if s.undeclared != nil {
			*s.undeclared = append(*s.undeclared, name)
		}
		return ""
	}
	if v, ok := s.with[name]; ok {
		return v
	}
	in := s.inputs[i]
	switch {
	case in.Item != "":
		return s.vars[in.Item]
	case in.Kind == packs.InputVerify:
		return s.verify
	}
	return ""
}

// StepJob is the job of one workflow item and what it gives the workflow.
type StepJob struct {
	Job Job
	// Args are the settings the step's setting inputs (packs.SettingInput) set, applied as a
	// tool call's arguments are, so they may narrow a rail and never widen it. BuildStep fills
	// them.
	Args map[string]string
	// Output, when set, is what the item passes to the steps after it once its run is green.
	Output func() string
}

// UndeclaredInputError is a mode's Step reading a step input its mode does not declare: a
// programming error of the mode, never the pack's.
type UndeclaredInputError struct {
	Mode string
	Keys []string
}

func (e *UndeclaredInputError) Error() string {
	return fmt.Sprintf("mode %s's step reads with.%s, which it does not declare in its StepInputs", e.Mode, strings.Join(e.Keys, ", with."))
}

// BuildStep is the job of one item of a step of mode m: with are the step's inputs expanded for
// the item, vars the item's names, verify the workflow's verify for it. A key with gives that m
// does not declare is refused (a pack's workflow is checked for it as it loads); so is a Step
// that reads one.
func (m Mode) BuildStep(with, vars map[string]string, verify string) (StepJob, error) {
	if m.Step == nil {
		return StepJob{}, BadInputf("a workflow runs %s steps, not %s", strings.Join(packs.StepModes(), ", "), m.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(with)) {
		if !slices.ContainsFunc(m.StepInputs, func(in packs.StepInput) bool { return in.Name == k }) {
			return StepJob{}, BadInputf("with.%s is not an input of mode %s, which takes %s", k, m.Name, packs.InputNames(m.StepInputs))
		}
	}
	var undeclared []string
	sj, err := m.Step(StepItem{inputs: m.StepInputs, with: with, vars: vars, verify: verify, undeclared: &undeclared})
	if len(undeclared) > 0 {
		return StepJob{}, &UndeclaredInputError{Mode: m.Name, Keys: undeclared}
	}
	if err != nil {
		return StepJob{}, err
	}
	for _, in := range m.StepInputs {
		if v, ok := with[in.Name]; ok && in.Setting != (packs.Key{}) && v != "" {
			if sj.Args == nil {
				sj.Args = map[string]string{}
			}
			sj.Args[in.Setting.String()] = v
		}
	}
	return sj, nil
}

// probeStep builds a step's job with every declared input and item name given, so a Step that
// reads an undeclared key fails its mode's registration, in every binary and test that links it.
func probeStep(m Mode) error {
	with := map[string]string{}
	for _, in := range m.StepInputs {
		with[in.Name] = in.Name
	}
	vars := map[string]string{}
	for _, n := range packs.ItemNames() {
		vars[n] = n
	}
	_, err := m.BuildStep(with, vars, "verify")
	var ue *UndeclaredInputError
	if errors.As(err, &ue) {
		return err
	}
	return nil
}

var (
	modesMu sync.RWMutex
	modes   = map[string]Mode{}
)

// RegisterMode makes a mode known to the layers above the modes, and to packs: its Settings
// resolve for its runs, and a mode outside the pack contract's own may be declared by a pack. A
// mode's package calls it once, from init; a second registration of a name, step inputs packs
// refuses, or a Step that reads an input the mode does not declare is a programming error.
func RegisterMode(m Mode) {
	if m.Name == "" {
		panic("engine: a mode with no name")
	}
	if m.Step != nil {
		if err := probeStep(m); err != nil {
			panic("engine: " + err.Error())
		}
	}
	modesMu.Lock()
	defer modesMu.Unlock()
	if _, dup := modes[m.Name]; dup {
		panic(fmt.Sprintf("engine: mode %q registered twice", m.Name))
	}
	packs.RegisterMode(packs.ModeSpec{Name: m.Name, Settings: m.Settings, Step: m.Step != nil, EditsInPlace: m.EditsInPlace, StepInputs: m.StepInputs})
	m.StepInputs = slices.Clone(m.StepInputs)
	modes[m.Name] = m
}

// LookupMode is the registered mode of that name.
func LookupMode(name string) (Mode, bool) {
	modesMu.RLock()
	defer modesMu.RUnlock()
	m, ok := modes[name]
	return m, ok
}

// RegisteredModes lists the registered modes' names, sorted.
func RegisteredModes() []string {
	modesMu.RLock()
	defer modesMu.RUnlock()
	out := make([]string, 0, len(modes))
	for name := range modes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// counted is what a mode's receipt calls its requests.
func counted(mode string) string {
	if m, ok := LookupMode(mode); ok && m.Counts != "" {
		return m.Counts
	}
	return "attempts"
}

// A Job is a front end's typed request for one run of a mode: what to do, with none of the
// settings, the model or the place, which the job layer resolves before the run.
type Job interface {
	Mode() Mode
	// Steps are the run's steps, made once the job layer has placed it.
	Steps(p Place) []Step
}

// Place is where a job runs and what the job layer resolved for it.
type Place struct {
	// Root is the repository root; Cwd the directory relative paths of the job resolve from.
	Root, Cwd string
	Settings  *packs.Settings
	// CacheDir is the operator's cache directory, for what a mode keeps between runs; "" keeps
	// nothing.
	CacheDir string
	// RollbackKey loads the operator's key for crash records, made on first use; a mode that
	// edits a file in place calls it. Nil, or a nil key, keeps no crash record: the in-process
	// restore only.
	RollbackKey func() []byte
	// OperatorKey loads the same operator secret (made on first use) for a mode that seals what
	// it journals for itself to read back, such as a workflow's resume, and reports why there is
	// none. Nil: there is none.
	OperatorKey func() ([]byte, error)
	// PayGate, when set, refuses a job of this many span lines that the ledger says costs the
	// host more than it saves; a mode with a break-even by size calls it once it knows the span.
	PayGate func(lines int) error
	// WorkflowGate, when set, refuses a workflow call whose items (of mode, over files files)
	// are expected to cost the host more than they save; the workflow calls it before its first
	// step's items run.
	WorkflowGate func(mode string, items, files int) error
}

// A TaskedJob carries text that goes into the prompt as it is (an agent's or a transform's
// task): the job layer holds it to the input budget before the run.
type TaskedJob interface {
	Job
	// TaskText is the task, and what to call it in a refusal ("the task file F"; "" is "the
	// task").
	TaskText() (what, text string)
}

// A PathsJob names paths of the file system it reads beyond those its settings name: a tool
// call's must resolve inside the repository, as only the operator may reach outside it.
type PathsJob interface {
	Job
	// Paths are the paths as the job names them, relative to Place.Cwd or absolute, with the
	// argument each came from.
	Paths() []NamedPath
}

// NamedPath is a path a job names and the setting or argument that named it.
type NamedPath struct {
	Arg  string
	Path string
}
