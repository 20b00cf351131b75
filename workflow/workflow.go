// Package workflow runs a pack's workflows (contract 1.2): steps of modes, each once or for each
// file, declaration or line, every item in a worktree of its own, spread over a pool of
// servers, the green items combined in a stable order on one branch that a final verify judges
// before it is offered. It sits above the job layer, as the front ends do: each item is a job
// of its mode, prepared and refused by the layer as a single call would be.
package workflow

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/pool"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/review"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the workflow mode: it asks no model itself; its items do.
var Mode = engine.Mode{Name: "workflow", Model: engine.NoModel, Outcome: outcome,
	Settings: slices.Concat(packs.VerifySettings, packs.HostSettings, []packs.Key{packs.Mutants, packs.DelegateWhen, packs.Jobs, packs.Servers, packs.OnRedBaseline})}

func init() {
	engine.RegisterMode(Mode)
	review.Register(Mode.Name, Branch, func(details json.RawMessage) string {
		return engine.DecodeDetails[Details](details).Status
	})
}

// The closed list of a workflow run's statuses (details.status).
const (
	// StatusCompleted: the final verify passed on the combined branch (or, for a workflow that
	// edits nothing, every item was green); the branch, if any, is offered.
	StatusCompleted = review.StatusCompleted
	// StatusVerifyFailed: the final verify failed on the combined branch, which was dropped.
	StatusVerifyFailed = "verify_failed"
	// StatusNoChange: no item left a change to combine.
	StatusNoChange = "no_change"
	// StatusInterrupted: the run stopped before its end; locum run --resume ID goes on.
	StatusInterrupted = "interrupted"
)

// Item outcomes (ItemResult.Status, beside a run's own status words).
const (
	ItemConflict = "CONFLICT"
	ItemReused   = "reused"
)

// Job is a request to run a workflow, or to resume one.
type Job struct {
	// Layer prepares each item as a job of its mode; Call is the front end's call, which each
	// item's call copies (a tool call's items are tool calls).
	Layer *job.Layer
	Call  job.Call
	// Name and Params are the workflow and its parameters; Resume, instead, is the id of an
	// interrupted run to go on with, under the name and parameters it ran with.
	Name   string
	Params map[string]string
	Resume string
	// Progress, when set, hears each item start and end.
	Progress func(Progress)
}

// Mode is the workflow mode.
func (*Job) Mode() engine.Mode { return Mode }

// Progress is the state of a run's items after one of them started or ended.
type Progress struct {
	Step                 string
	Total, Done, Running int
	Red                  int
	// Servers are the step's servers, each with its items of this step.
	Servers []Server
	// Started is the item that just started on its server; Item the one that just ended. One of
	// them is set.
	Started, Item *ItemResult
}

// ItemResult is what became of one item.
type ItemResult struct {
	Step   string `json:"step"`
	Index  int    `json:"index"`
	Item   string `json:"item"`
	Server string `json:"server"`
	RunID  string `json:"run_id"`
	// Status is the item run's (OK, RED, REFUSED, ERROR), CONFLICT for a green item whose change
	// did not apply on the branch, or reused for one a resumed run took from the run before.
	Status  string `json:"status"`
	Outcome string `json:"outcome"`
	// Commit is the item's change, "" when it left none.
	Commit string `json:"commit"`
	// Output is what the item passes to later steps (a digest, the groups); bounded.
	Output string `json:"output,omitempty"`
	// Inputs is the fingerprint of the item's expanded inputs and the tree it ran at.
	Inputs string `json:"-"`
	// VerifyStrength is how many mutants of a kept edit its verify rejected (K/N, or ?); "" where
	// none ran.
	VerifyStrength string `json:"verify_strength,omitempty"`
	// Baseline is what the item's verify said of the tree before its edit (engine.BaselineRed,
	// ...); "" where its run did not reach it.
	Baseline string `json:"baseline,omitempty"`
}

// Blind says the item kept an edit its verify was not shown able to fail on.
func (it ItemResult) Blind() bool {
	k, n, ok := strings.Cut(it.VerifyStrength, "/")
	return it.Green() && it.VerifyStrength != "" && (!ok || k == "0" || n == "0")
}

// Green says the item's work stands: its run was OK (or reused from a run where it was).
func (it ItemResult) Green() bool {
	return it.Status == string(engine.StatusOK) || it.Status == ItemReused
}

// maxOutputBytes bounds what one item passes forward, and what a step's output holds in all.
const (
	maxOutputBytes     = 8 << 10
	maxStepOutputBytes = 64 << 10
)

// Steps are the workflow's steps: scope (the workflow, its parameters, the base commit, a resumed
// run's items), servers (each endpoint of the pool probed for its slots), one step per workflow
// step (its items run, the green ones combined on the branch), and verify (the final verify on
// the combined branch, which decides whether the branch is offered).
func (j *Job) Steps(p engine.Place) []engine.Step {
	w := &run{job: j, place: p, g: &repo{gitsafe.NewWorktrees(p.Root)}, outputs: map[string]string{}, files: map[string]bool{}}
	return []engine.Step{
		{Name: "scope", Run: w.scope},
		{Name: "servers", Run: w.servers},
		{Name: "items", Run: w.runSteps},
		{Name: "verify", Run: w.verify},
	}
}

// run is the state of one workflow run.
type run struct {
	job   *Job
	place engine.Place
	g     *repo
	r     *engine.Run

	name, from string
	wf         packs.Workflow
	// definition is the fingerprint of wf, sealed with the run for its resume.
	definition string
	params     map[string]string
	base       string
	head       string
	// headTree is head's tree: cherry-picking the same changes onto the same base gives it
	// again, so a resumed run's item fingerprints match where the work before them did.
	headTree string
	// combine is the worktree of the branch, made when the first change is combined.
	combine, branch string
	offered         bool
	pool            *pool.Pool
	items           []ItemResult
	outputs         map[string]string
	// files are the files the items listed so far work on (a file glob's, a declaration's).
	files map[string]bool
	// prior are the green items of the run resumed, by step and item key.
	prior     map[string]ItemResult
	resumedOf string
	status    string
	// started says an item began, so an end before the last step leaves work to resume.
	started bool
	// seal authenticates what a resume reads back; noSeal says why this run has none, in which
	// case it cannot be resumed.
	seal   seal
	noSeal error
	mu     sync.Mutex
	// handoffs are the red items' handoffs, as their runs gave them.
	handoffs []engine.ItemHandoff
	// d are the run's details.
	d Details
}

// Details are a workflow run's part of its result and of its journal's run_end.
type Details struct {
	// Resume says why the run cannot be resumed, where it has no operator key to seal its
	// journal with.
	Resume string `json:"resume,omitempty"`
	// Workflow, Params and Base are the workflow run, once found; ResumedFrom the run it resumes.
	Workflow    string            `json:"workflow,omitempty"`
	Params      map[string]string `json:"params,omitzero"`
	Base        string            `json:"base,omitempty"`
	ResumedFrom string            `json:"resumed_from,omitempty"`
	// Ran is nil until the steps ran.
	*Ran
	// Kept and Red count the items whose change was kept and those not green, once counted.
	Kept *int `json:"kept,omitempty"`
	Red  *int `json:"red,omitempty"`
	// Status is the run's closed status (StatusCompleted, ...), once it has one.
	Status string `json:"status,omitempty"`
	// VerifyExit and VerifyVerdict are the final verify's, once it ran (VerifyExit null where it
	// did not exit); VerifyTail the end of its output where it failed.
	VerifyExit    **int   `json:"verify_exit,omitempty"`
	VerifyVerdict string  `json:"verify_verdict,omitempty"`
	VerifyTail    *string `json:"verify_tail,omitempty"`
	// Branch and Commit are the branch offered and its head.
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// StrengthDetails are the final verify's strength on the kept edits, where measured.
	engine.StrengthDetails
}

// Ran are each item's result, and the pool's servers with their counts (null where none).
type Ran struct {
	Items   []ItemResult `json:"items"`
	Servers []Server     `json:"servers"`
}

func priorKey(step, item string) string { return step + "\x00" + item }

func (w *run) scope(ctx context.Context, r *engine.Run) error {
	w.r = r
	r.SetDetails(&w.d)
	r.SetHandoff(w.handoff)
	r.Guard("worktrees", w.cleanup)
	if err := w.job.Layer.CheckCallModel(w.job.Call); err != nil {
		return err
	}
	c, err := w.job.Layer.Composition()
	if err != nil {
		return err
	}
	w.noSeal = errors.New("no operator key")
	if w.place.OperatorKey != nil {
		var key []byte
		if key, w.noSeal = w.place.OperatorKey(); w.noSeal == nil {
			w.seal = newSeal(key)
		}
	}
	if w.noSeal != nil {
		w.d.Resume = "no operator key to seal its journal with (" + oneLine(w.noSeal.Error()) + ")"
	}
	name, params := w.job.Name, w.job.Params
	if w.job.Resume != "" {
		if name, params, err = w.readPrior(ctx, c); err != nil {
			return err
		}
	}
	wf, from, ok := c.Workflow(name)
	if !ok {
		names := c.WorkflowNames()
		return engine.BadInputf("no composed pack declares a workflow %q; the workflows are: %s", untrusted.Escape(name), cmp.Or(strings.Join(names, ", "), "none"))
	}
	w.name, w.from, w.wf = name, from, wf
	if w.definition, err = definition(wf); err != nil {
		return err
	}
	if w.params, err = bindParams(name, wf, params); err != nil {
		return err
	}
	if w.edits() && strings.TrimSpace(wf.Verify) == "" {
		return engine.BadInputf("workflow %s edits files but declares no verify: its combined result cannot be judged", name)
	}
	if err := w.checkVerifies(); err != nil {
		return err
	}
	// Every item runs in a worktree of its own: refuse before the first where there is no place
	// for one that stays in the repository's git directory.
	if _, err := gitsafe.WorktreeDir(w.place.Root, r.ID); err != nil {
		return err
	}
	if w.base == "" {
		if w.base, err = head(ctx, w.place.Root); err != nil {
			return fmt.Errorf("the repository has no commit to start the workflow's worktrees from: %w", err)
		}
	}
	w.head = w.base
	w.branch = Branch(r.ID)
	w.d.Workflow, w.d.Params, w.d.Base, w.d.ResumedFrom = name, w.params, w.base, w.resumedOf
	r.Emit(engine.WorkflowEvent{Name: name, Pack: from, Definition: w.definition, Params: w.params, Base: w.base,
		ResumedFrom: nilIfEmpty(w.resumedOf), Seal: nilIfEmpty(w.seal.run(r.ID, name, w.definition, w.base, w.params))})
	if w.resumedOf != "" {
		if err := w.carry(ctx); err != nil {
			return fmt.Errorf("keeping the green items of run %s: %w", w.resumedOf, err)
		}
	}
	return nil
}

// checkVerifies holds every verify the run will expand to packs.CheckCommand with the
// parameters' values, before any item runs: the pack was checked as it loaded with their
// defaults, and a value given now is shell text that can move what follows it. Each expansion
// checks again.
func (w *run) checkVerifies() error {
	check := func(what, tmpl string, item []string) error {
		asWritten := func(n string) bool { _, param := w.params[n]; return param && !slices.Contains(item, n) }
		if err := packs.CheckCommand(tmpl, w.params, asWritten); err != nil {
			return engine.Refusalf("%s, with the parameters given: %v", what, err)
		}
		return nil
	}
	for _, st := range w.wf.Steps {
		var item []string
		if st.ForEach != nil {
			kind, _ := st.ForEach.Kind()
			item = packs.ItemVars[kind]
		}
		if v, own := st.OwnVerify(); own {
			if err := check("step "+st.Name+"'s verify", v, item); err != nil {
				return err
			}
		} else if packs.StepEdits(st.Mode) {
			if err := check("the verify of step "+st.Name+"'s items", w.wf.Verify, item); err != nil {
				return err
			}
		}
	}
	return check("the workflow's verify", w.wf.Verify, nil)
}

// edits says a step of the workflow runs a mode that edits files.
func (w *run) edits() bool {
	for _, st := range w.wf.Steps {
		if m, ok := engine.LookupMode(st.Mode); ok && m.EditsInPlace {
			return true
		}
	}
	return false
}

// bindParams gives every declared parameter its value, refusing one the workflow does not
// declare and one that is missing.
func bindParams(name string, wf packs.Workflow, given map[string]string) (map[string]string, error) {
	out := map[string]string{}
	for k, v := range given {
		if _, ok := wf.Params[k]; !ok {
			return nil, engine.BadInputf("workflow %s takes no parameter %q; it takes: %s", name, untrusted.Escape(k), paramNames(wf))
		}
		out[k] = v
	}
	for k, p := range wf.Params {
		if _, ok := out[k]; ok {
			continue
		}
		if p.Default == nil {
			return nil, engine.BadInputf("workflow %s needs --param %s=VALUE (%s)", name, k, cmp.Or(p.Doc, "no description"))
		}
		out[k] = *p.Default
	}
	return out, nil
}

func paramNames(wf packs.Workflow) string {
	names := slices.Sorted(maps.Keys(wf.Params))
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// servers probes each endpoint of the pool for what it is and the slots it reports, under the
// loopback rail.
func (w *run) servers(ctx context.Context, r *engine.Run) error {
	s := r.Spec.Settings
	probed, err := pool.Probe(ctx, s, r.Spec.Dial, r.Spec.Transport)
	if err != nil {
		return err
	}
	for _, p := range probed {
		if p.Err != nil {
			return fmt.Errorf("server %s: %w", untrusted.Escape(p.URL), p.Err)
		}
	}
	jobs := int(s.Int(packs.Jobs))
	servers := pool.Servers(probed, jobs)
	w.pool = pool.New(servers, jobs)
	r.Emit(engine.ServersEvent{Servers: servers, Jobs: jobs})
	return nil
}

// items runs the workflow's steps in order: each step's items in parallel from the branch as the
// steps before left it, then its green changes combined onto the branch in item order.
func (w *run) runSteps(ctx context.Context, r *engine.Run) error {
	defer func() { w.d.Ran = &Ran{Items: w.items, Servers: w.pool.Snapshot()} }()
	for _, st := range w.wf.Steps {
		vars := maps.Clone(w.params)
		maps.Copy(vars, w.outputs)
		tree, err := gitsafe.Run(ctx, w.place.Root, "rev-parse", "--verify", w.head+"^{tree}")
		if err != nil {
			return err
		}
		w.headTree = strings.TrimSpace(tree)
		list, err := w.list(ctx, st, vars)
		if err != nil {
			return err
		}
		keys := make([]string, len(list))
		for i, it := range list {
			keys[i] = it.Key
		}
		r.Emit(engine.ItemsEvent{Step: st.Name, Mode: st.Mode, Count: len(list), Items: keys})
		files := map[string]bool{}
		for _, it := range list {
			files[cmp.Or(it.Vars["file"], it.Key)] = true
		}
		if len(w.items) == 0 {
			w.hostTurns(r, len(files), false)
			if gate := w.place.WorkflowGate; gate != nil && w.resumedOf == "" {
				if err := gate(st.Mode, len(list), len(files)); err != nil {
					return err
				}
			}
		}
		maps.Copy(w.files, files)
		results, err := w.runStep(ctx, st, list, vars)
		w.mu.Lock()
		w.items = append(w.items, results...)
		w.mu.Unlock()
		if err != nil {
			return err
		}
		if ctx.Err() != nil {
			// The green items keep their refs; a resume combines them.
			w.status = StatusInterrupted
			w.d.Status = w.status
			return context.Cause(ctx)
		}
		if err := w.combineStep(ctx, st, w.items[len(w.items)-len(results):]); err != nil {
			return err
		}
		w.outputs[packs.StepOutput(st.Name)] = stepOutput(st, results)
	}
	return nil
}

// combineStep applies the step's green changes onto the branch in item order; a change that does
// not apply is that item's conflict, reported and left out, never resolved.
func (w *run) combineStep(ctx context.Context, st packs.WorkflowStep, results []ItemResult) error {
	for i := range results {
		it := &results[i]
		if !it.Green() || it.Commit == "" {
			continue
		}
		if w.combine == "" {
			wt, err := gitsafe.WorktreeDir(w.place.Root, w.r.ID+"/combine")
			if err == nil {
				wt, err = w.g.AddBranch(ctx, wt, w.branch, w.base)
			}
			if err != nil {
				return err
			}
			w.combine = wt
			w.r.Emit(engine.WorktreeEvent{Path: wt, Branch: w.branch, Base: w.base})
		}
		conflict, err := pick(ctx, w.combine, it.Commit)
		if err != nil {
			return fmt.Errorf("combining %s: %w", untrusted.Escape(it.Item), err)
		}
		w.r.Emit(engine.CombineEvent{Step: st.Name, Index: it.Index, Item: it.Item, Commit: it.Commit, Conflict: conflict})
		if conflict {
			it.Status = ItemConflict
			it.Outcome = "its change does not apply on the branch after the items before it; left out: run it again on its own"
		}
	}
	if w.combine != "" {
		h, err := head(ctx, w.combine)
		if err != nil {
			return err
		}
		w.head = h
	}
	return nil
}

// hostTurns records the host turns of the workflow's job: done directly, each file its items
// touch read and edited and the verify run once (each file read, where the workflow edits
// nothing); delegated, the call, and where a branch is offered its review and its accept. Its
// items count none of their own: they share this one call.
func (w *run) hostTurns(r *engine.Run, files int, offered bool) {
	t := cost.Turns{Direct: int64(files), Delegated: 1}
	if w.edits() {
		t.Direct = int64(2*files + 1)
		if offered {
			t.Delegated = 3
		}
	}
	r.HostWork(engine.HostWork{Turns: t})
}

// verify runs the final verify on the combined branch; only a green verdict offers the branch.
func (w *run) verify(ctx context.Context, r *engine.Run) error {
	w.hostTurns(r, len(w.files), false)
	kept, red := 0, 0
	for _, it := range w.items {
		switch {
		case it.Green() && it.Commit != "":
			kept++
		case !it.Green():
			red++
		}
	}
	w.d.Kept, w.d.Red = &kept, &red
	if !w.edits() {
		w.status = StatusCompleted
		w.d.Status = w.status
		if red > 0 {
			return &engine.RedError{Reason: fmt.Sprintf("%d of %d items did not end green", red, len(w.items))}
		}
		return nil
	}
	if kept == 0 {
		w.status = StatusNoChange
		w.d.Status = w.status
		return &engine.RedError{Kind: StatusNoChange, Reason: "no item left a change to combine: nothing was done"}
	}
	start := time.Now()
	r.Observe(engine.ProgressEvent{Stage: engine.StageVerify, Step: "verify"})
	vars := maps.Clone(w.params)
	maps.Copy(vars, w.outputs)
	command, err := packs.ExpandCommand(w.wf.Verify, vars, func(name string) bool { _, param := w.params[name]; return param })
	if err != nil {
		return engine.BadInputf("verify: %v", err)
	}
	vr, err := r.Verify(ctx, command, w.combine)
	if err == nil && (vr.Canceled || ctx.Err() != nil) {
		err = context.Cause(ctx)
	}
	if err != nil {
		// Stopped while it judged the branch: the items stand, for a resume to judge again.
		w.status = StatusInterrupted
		w.d.Status = w.status
		return err
	}
	var exit *int
	if vr.Exited {
		exit = &vr.ExitCode
	}
	r.Emit(engine.VerifyRoundEvent{Round: 1, Verdict: vr.Verdict(), Exit: exit, DurationMs: time.Since(start).Milliseconds(), Tail: string(vr.Output)})
	w.d.VerifyExit, w.d.VerifyVerdict = &exit, vr.Verdict()
	if !vr.Exited || vr.ExitCode != 0 {
		w.status = StatusVerifyFailed
		w.d.Status = w.status
		w.d.VerifyTail = new(string(vr.Output))
		return &engine.RedError{Reason: fmt.Sprintf("the final verify failed on the combined branch (%s): the branch is not offered", vr.Verdict())}
	}
	if err := w.measureFinal(ctx, r, command); err != nil {
		w.status = StatusInterrupted
		w.d.Status = w.status
		return err
	}
	w.offered = true
	w.hostTurns(r, len(w.files), true)
	w.status = StatusCompleted
	w.d.Status = w.status
	w.d.Branch, w.d.Commit = w.branch, w.head
	r.Emit(engine.BranchCommitEvent{Commit: w.head, Branch: w.branch})
	if red > 0 {
		return &engine.RedError{Kind: "partial", Reason: fmt.Sprintf("%d of %d items did not end green; the branch holds the %d that did, and the final verify passed on it", red, len(w.items), kept)}
	}
	return nil
}

// cleanup removes every worktree the run made; the branch stays only when offered, and the items'
// refs only when the run was interrupted, for its resume.
func (w *run) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var errs []error
	if w.combine != "" {
		errs = append(errs, w.g.Remove(ctx, w.combine))
	}
	if w.r != nil {
		errs = append(errs, w.g.RemoveRun(ctx, w.r.ID))
		if !w.offered {
			errs = append(errs, gitsafe.DeleteBranch(ctx, w.place.Root, w.branch))
		}
		if w.status != "" && w.status != StatusInterrupted {
			errs = append(errs, w.g.deleteItemRefs(ctx, w.r.ID))
			if w.resumedOf != "" {
				errs = append(errs, w.g.deleteItemRefs(ctx, w.resumedOf))
			}
		} else if w.status == "" && w.started {
			// Stopped by an error after items ran: what they did is kept for a resume.
			w.status = StatusInterrupted
			w.d.Status = w.status
		}
	}
	return errors.Join(errs...)
}
