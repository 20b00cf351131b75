// Package workflow runs a pack's workflows (contract 1.2): steps of modes, each once or for each
// file, Go declaration or line, every item in a worktree of its own, spread over a pool of
// servers, the green items combined in a stable order on one branch that a final verify judges
// before it is offered. It sits above the job layer, as the front ends do: each item is a job
// of its mode, prepared and refused by the layer as a single call would be.
package workflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/agent"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/summarize"
	"github.com/locumdev/locum/runner/transform"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the workflow mode: it asks no model itself; its items do.
var Mode = engine.Mode{Name: "workflow", Model: engine.NoModel, Outcome: outcome, Counts: "items"}

func init() {
	engine.RegisterMode(Mode)
	agent.RegisterReview(Mode.Name, Branch)
}

// The closed list of a workflow run's statuses (details.status).
const (
	// StatusCompleted: the final verify passed on the combined branch (or, for a workflow that
	// edits nothing, every item was green); the branch, if any, is offered.
	StatusCompleted = "completed"
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
	Servers              []Server
	// Item is the item that just ended, nil when one just started.
	Item *ItemResult
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
	w := &run{job: j, place: p, g: &repo{root: p.Root}, outputs: map[string]string{}}
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
	params     map[string]string
	base       string
	head       string
	// headTree is head's tree: cherry-picking the same changes onto the same base gives it
	// again, so a resumed run's item fingerprints match where the work before them did.
	headTree string
	// combine is the worktree of the branch, made when the first change is combined.
	combine, branch string
	offered         bool
	pool            *pool
	items           []ItemResult
	outputs         map[string]string
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
}

func priorKey(step, item string) string { return step + "\x00" + item }

func (w *run) scope(ctx context.Context, r *engine.Run) error {
	w.r = r
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
			w.seal = seal{key: key}
		}
	}
	if w.noSeal != nil {
		r.Detail("resume", "no operator key to seal its journal with ("+oneLine(w.noSeal.Error())+")")
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
	if w.params, err = bindParams(name, wf, params); err != nil {
		return err
	}
	if w.edits() && strings.TrimSpace(wf.Verify) == "" {
		return engine.BadInputf("workflow %s edits files but declares no verify: its combined result cannot be judged", name)
	}
	// Every item runs in a worktree of its own: refuse before the first where there is no place
	// for one that stays in the repository's git directory.
	if _, err := agent.WorktreeDir(w.place.Root, r.ID); err != nil {
		return err
	}
	if w.base == "" {
		if w.base, err = head(ctx, w.place.Root); err != nil {
			return fmt.Errorf("the repository has no commit to start the workflow's worktrees from: %w", err)
		}
	}
	w.head = w.base
	w.branch = Branch(r.ID)
	r.Detail("workflow", name)
	r.Detail("params", w.params)
	r.Detail("base", w.base)
	if w.resumedOf != "" {
		r.Detail("resumed_from", w.resumedOf)
	}
	r.Event("workflow", map[string]any{"name": name, "pack": from, "params": w.params, "base": w.base, "resumed_from": nilIfEmpty(w.resumedOf),
		"seal": nilIfEmpty(w.seal.run(r.ID, name, w.base, w.params))})
	if w.resumedOf != "" {
		if err := w.carry(ctx); err != nil {
			return fmt.Errorf("keeping the green items of run %s: %w", w.resumedOf, err)
		}
	}
	return nil
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
	var urls []string
	for _, u := range strings.Split(s.String(packs.Servers), ",") {
		if u = strings.TrimSpace(u); u != "" && !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	if len(urls) == 0 {
		urls = []string{s.String(packs.BaseURL)}
	}
	jobs := int(s.Int(packs.Jobs))
	servers := make([]Server, len(urls))
	for i, raw := range urls {
		u, err := rails.ParseEndpoint(raw, s.Bool(packs.AllowRemote))
		if err != nil {
			return err
		}
		c := client.New(client.Config{BaseURL: u, AllowRemote: s.Bool(packs.AllowRemote), Timeout: s.Duration(packs.Timeout),
			Dial: r.Spec.Dial, Transport: r.Spec.Transport})
		pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		info, err := c.Probe(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("server %s: %w", untrusted.Escape(raw), err)
		}
		servers[i] = Server{URL: raw, Kind: string(info.Kind), Slots: info.Slots}
	}
	for i := range servers {
		servers[i].Capacity = capacity(servers[i].Slots, jobs, len(servers))
	}
	w.pool = newPool(servers, jobs)
	r.Event("servers", map[string]any{"servers": servers, "jobs": jobs})
	return nil
}

// items runs the workflow's steps in order: each step's items in parallel from the branch as the
// steps before left it, then its green changes combined onto the branch in item order.
func (w *run) runSteps(ctx context.Context, r *engine.Run) error {
	defer func() { r.Detail("items", w.items); r.Detail("servers", w.pool.snapshot()) }()
	for _, st := range w.wf.Steps {
		vars := maps.Clone(w.params)
		maps.Copy(vars, w.outputs)
		tree, err := agent.Git(ctx, w.place.Root, "rev-parse", "--verify", w.head+"^{tree}")
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
		r.Event("items", map[string]any{"step": st.Name, "mode": st.Mode, "count": len(list), "items": keys})
		results := w.runStep(ctx, st, list, vars)
		w.mu.Lock()
		w.items = append(w.items, results...)
		w.mu.Unlock()
		if ctx.Err() != nil {
			// The green items keep their refs; a resume combines them.
			w.status = StatusInterrupted
			r.Detail("status", w.status)
			return context.Cause(ctx)
		}
		if err := w.combineStep(ctx, st, w.items[len(w.items)-len(results):]); err != nil {
			return err
		}
		w.outputs[packs.StepOutput(st.Name)] = stepOutput(st, results)
	}
	return nil
}

// runStep runs a step's items, at most jobs at once over the pool, and returns them in order.
func (w *run) runStep(ctx context.Context, st packs.WorkflowStep, list []Item, vars map[string]string) []ItemResult {
	results := make([]ItemResult, len(list))
	var wg sync.WaitGroup
	var done, red, running int
	var mu sync.Mutex
	report := func(it *ItemResult) {
		if w.job.Progress == nil {
			return
		}
		mu.Lock()
		p := Progress{Step: st.Name, Total: len(list), Done: done, Red: red, Running: running, Servers: w.pool.snapshot(), Item: it}
		mu.Unlock()
		w.job.Progress(p)
	}
	ended := func(i int) {
		w.r.Event("item_end", w.itemEvent(results[i]))
		mu.Lock()
		if results[i].Green() {
			done++
		} else {
			red++
		}
		mu.Unlock()
		report(&results[i])
	}
	// First what needs no server: an item whose inputs do not expand, and one the run resumed
	// did with the same inputs, journaled and given this run's ref before any item waits for a
	// server, so a stop while the others wait loses none of them.
	inputs := make([]itemInputs, len(list))
	var todo []int
	for i, it := range list {
		results[i] = ItemResult{Step: st.Name, Index: i + 1, Item: it.Key}
		in, err := w.inputs(st, it, vars)
		if err != nil {
			status, _, _ := engine.Classify(err)
			results[i].Status, results[i].Outcome = string(status), oneLine(err.Error())
			ended(i)
			continue
		}
		inputs[i], results[i].Inputs = in, in.fingerprint
		prev, ok := w.prior[priorKey(st.Name, it.Key)]
		if !ok || prev.Inputs != in.fingerprint {
			todo = append(todo, i)
			continue
		}
		prev.Index, prev.Status, prev.Server = i+1, ItemReused, ""
		if err := w.keepPrior(context.WithoutCancel(ctx), prev); err != nil {
			prev.Status, prev.Outcome, prev.Commit = string(engine.StatusError), "its change from the run resumed could not be kept: "+oneLine(err.Error()), ""
		}
		w.started = true
		results[i] = prev
		ended(i)
	}
	for _, i := range todo {
		srv := w.pool.acquire(ctx)
		if srv < 0 {
			results[i].Status = string(engine.StatusError)
			results[i].Outcome = "not started: the run was stopped"
			continue
		}
		w.started = true
		results[i].Server = w.pool.servers[srv].URL
		w.r.Event("item_start", map[string]any{"step": st.Name, "index": i + 1, "item": list[i].Key, "server": results[i].Server})
		mu.Lock()
		running++
		mu.Unlock()
		report(nil)
		wg.Add(1)
		go func(i, srv int) {
			defer wg.Done()
			w.runItem(ctx, st, list[i], inputs[i], &results[i])
			mu.Lock()
			running--
			mu.Unlock()
			// Journaled before the server is free for the next item: a run killed after this
			// line has the item on record for its resume.
			ended(i)
			w.pool.release(srv, results[i].Green())
		}(i, srv)
	}
	wg.Wait()
	return results
}

// list is a step's items, as the commit its items start from has them: a file the working tree
// holds and the commit does not is no item, as it would be none in the item's worktree.
func (w *run) list(ctx context.Context, st packs.WorkflowStep, vars map[string]string) ([]Item, error) {
	if st.ForEach == nil {
		return expand(w.place.Root, st, vars)
	}
	wt, err := agent.WorktreeDir(w.place.Root, w.r.ID+"/list-"+st.Name)
	if err == nil {
		wt, err = w.g.addWorktree(ctx, wt, w.head)
	}
	if err != nil {
		return nil, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = w.g.removeWorktree(cctx, wt)
	}()
	return expand(wt, st, vars)
}

// itemInputs are one item's inputs, expanded, and their fingerprint: a resumed run's item is
// taken only where it had the same, at the same tree.
type itemInputs struct {
	vars map[string]string
	with map[string]string
	// verify is the workflow's verify, for a transform step that gives none of its own.
	verify      string
	fingerprint string
}

func (w *run) inputs(st packs.WorkflowStep, it Item, vars map[string]string) (itemInputs, error) {
	iv := maps.Clone(vars)
	maps.Copy(iv, it.Vars)
	in := itemInputs{vars: iv, with: map[string]string{}}
	asWritten := func(name string) bool {
		_, param := w.params[name]
		_, item := it.Vars[name]
		return param && !item
	}
	for k, tmpl := range st.With {
		var v string
		var err error
		if k == "verify" {
			v, err = packs.ExpandCommand(tmpl, iv, asWritten)
		} else {
			v, err = packs.Expand(tmpl, iv)
		}
		if err != nil {
			return in, engine.BadInputf("step %s: with.%s: %v", st.Name, k, err)
		}
		// A pack wrote the path: it names the repository's own files, from its root, whatever
		// the mode would take from the operator.
		if (k == "file" || k == "dir") && !filepath.IsLocal(v) && v != "." {
			return in, engine.Refusalf("step %s: with.%s %s: outside the repository; a workflow's item reads the repository's files only, named from its root", st.Name, k, untrusted.Escape(v))
		}
		in.with[k] = v
	}
	if _, own := st.With["verify"]; !own && st.Mode == transform.Mode.Name {
		v, err := packs.ExpandCommand(w.wf.Verify, iv, asWritten)
		if err != nil {
			return in, engine.BadInputf("verify: %v", err)
		}
		in.verify = v
	}
	data, err := json.Marshal([]any{st.Mode, it.Key, in.with, in.verify, w.headTree})
	if err != nil {
		return in, err
	}
	sum := sha256.Sum256(data)
	in.fingerprint = hex.EncodeToString(sum[:])
	return in, nil
}

func (w *run) itemEvent(it ItemResult) map[string]any {
	return map[string]any{"step": it.Step, "index": it.Index, "item": it.Item, "server": it.Server, "run_id": nilIfEmpty(it.RunID),
		"status": it.Status, "outcome": it.Outcome, "commit": nilIfEmpty(it.Commit), "output": nilIfEmpty(it.Output),
		"inputs": nilIfEmpty(it.Inputs), "seal": nilIfEmpty(w.seal.item(w.r.ID, it))}
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// runItem runs one item in a worktree of its own at the branch's head, through the job layer as
// a call of its mode to the item's server, and commits what a green edit changed.
func (w *run) runItem(ctx context.Context, st packs.WorkflowStep, it Item, in itemInputs, res *ItemResult) {
	fail := func(err error) {
		status, _, _ := engine.Classify(err)
		res.Status = string(status)
		res.Outcome = oneLine(err.Error())
	}
	j, args, out, err := itemJob(st, in.with, in.vars, in.verify)
	if err != nil {
		fail(err)
		return
	}
	wt, err := agent.WorktreeDir(w.place.Root, fmt.Sprintf("%s/%s-%04d", w.r.ID, st.Name, res.Index))
	if err == nil {
		wt, err = w.g.addWorktree(ctx, wt, w.head)
	}
	if err != nil {
		fail(err)
		return
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		_ = w.g.removeWorktree(cctx, wt)
	}()
	call := w.job.Call
	call.BaseURL = res.Server
	// An item's result is re-read over the host's turns as the workflow's is.
	call.Args = maps.Clone(args)
	if call.Args == nil {
		call.Args = map[string]string{}
	}
	if s := w.place.Settings; s != nil {
		call.Args[packs.HostTurnsLeft.String()] = strconv.FormatInt(s.Int(packs.HostTurnsLeft), 10)
	}
	call.Batch = true
	call.JournalPath = ""
	call.Observer, call.Progress = nil, nil
	call.Argv = []string{"run", w.name, "--step", st.Name, "--item", it.Key}
	call.Parent = &engine.ParentRun{Run: w.r.ID, Step: st.Name, Item: it.Key}
	mode, _ := engine.LookupMode(st.Mode)
	p, err := w.job.Layer.Prepare(ctx, mode, call)
	if err != nil {
		fail(err)
		return
	}
	p.SetHost(&engine.HostSide{ResultBytes: func(r *engine.Result) int64 {
		return int64(len(ItemLine(ItemResult{Step: st.Name, Index: res.Index, Item: it.Key, Status: string(r.Status), Outcome: r.Outcome()}))) + 1
	}})
	r, err := p.RunIn(ctx, j, wt)
	if err != nil {
		fail(err)
		return
	}
	res.RunID, res.Status = r.RunID, string(r.Status)
	res.Outcome = oneLine(cmp.Or(r.Outcome(), errMessage(r)))
	if r.Model != nil {
		w.sawModel(*r.Model)
	}
	w.addUsage(r)
	w.r.AddItemSaved(r.HostSaved)
	if r.ExitCode != 0 {
		return
	}
	res.Output = capBytes(out(), maxOutputBytes)
	if res.Outcome == "" && res.Output != "" {
		res.Outcome = st.Mode + ": " + oneLine(res.Output)
	}
	if !mode.EditsInPlace {
		return
	}
	file, _ := r.Details["file"].(string)
	if file == "" {
		return
	}
	sha, err := commitFile(ctx, wt, file, commitMessage(w.name, st.Name, it.Key))
	if err != nil {
		res.Status, res.Outcome = string(engine.StatusError), "the green edit could not be committed: "+oneLine(err.Error())
		return
	}
	if sha == "" {
		return
	}
	if _, err := w.g.locked(ctx, w.place.Root, "update-ref", itemRef(w.r.ID, st.Name, res.Index), sha); err != nil {
		res.Status, res.Outcome = string(engine.StatusError), "the green edit's commit could not be kept: "+oneLine(err.Error())
		return
	}
	res.Commit = sha
}

// itemJob is the job of a step's mode for one item, the settings its inputs set (dedup's glob),
// and what the item passes forward once its run is green.
func itemJob(st packs.WorkflowStep, with, vars map[string]string, verify string) (engine.Job, map[string]string, func() string, error) {
	pick := func(key, fallback string) string {
		if v, ok := with[key]; ok {
			return v
		}
		return vars[fallback]
	}
	build, ok := builders[st.Mode]
	if !ok {
		return nil, nil, nil, engine.BadInputf("step %s: a workflow runs transform, summarize and dedup steps, not %s", st.Name, untrusted.Escape(st.Mode))
	}
	return build(pick, verify)
}

type fieldFunc func(key, fallback string) string

// builders make each mode's job from a step's inputs; a mode a step names must have one.
var builders = map[string]func(field fieldFunc, verify string) (engine.Job, map[string]string, func() string, error){
	transform.Mode.Name: func(field fieldFunc, verify string) (engine.Job, map[string]string, func() string, error) {
		j := transform.Job{File: field("file", "file"), Lines: field("lines", ""), Symbol: field("symbol", "symbol"),
			Verify: cmp.Or(field("verify", ""), verify), Task: field("task", "")}
		return j, nil, func() string { return "" }, nil
	},
	summarize.Mode.Name: func(field fieldFunc, _ string) (engine.Job, map[string]string, func() string, error) {
		j := &summarize.Job{File: field("file", "file"), Lines: field("lines", ""), Symbol: field("symbol", "symbol")}
		return j, nil, func() string {
			var b strings.Builder
			for _, c := range j.Claims {
				if c.Supported() {
					fmt.Fprintf(&b, "- %s (lines %d-%d)\n", c.Text, c.Lines[0], c.Lines[1])
				}
			}
			return b.String()
		}, nil
	},
	dedup.Mode.Name: func(field fieldFunc, _ string) (engine.Job, map[string]string, func() string, error) {
		j := &dedup.Job{Dir: field("dir", "")}
		var args map[string]string
		if g := field("glob", ""); g != "" {
			args = map[string]string{packs.Glob.String(): g}
		}
		return j, args, func() string {
			var b strings.Builder
			for i, g := range j.Found.Groups {
				fmt.Fprintf(&b, "group %d: %s\n", i+1, strings.Join(g.Files, " "))
			}
			return b.String()
		}, nil
	},
}

// stepOutput is what a step passes to the steps after it: its one item's output, or each green
// item's under its name.
func stepOutput(st packs.WorkflowStep, results []ItemResult) string {
	if st.ForEach == nil && len(results) == 1 {
		return results[0].Output
	}
	var b strings.Builder
	for _, it := range results {
		if it.Green() && it.Output != "" {
			fmt.Fprintf(&b, "%s:\n%s\n", it.Item, strings.TrimRight(it.Output, "\n"))
		}
	}
	return capBytes(b.String(), maxStepOutputBytes)
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
			wt, err := agent.WorktreeDir(w.place.Root, w.r.ID+"/combine")
			if err == nil {
				wt, err = w.g.addBranchWorktree(ctx, wt, w.branch, w.base)
			}
			if err != nil {
				return err
			}
			w.combine = wt
			w.r.Event("worktree", map[string]any{"path": wt, "branch": w.branch, "base": w.base})
		}
		conflict, err := pick(ctx, w.combine, it.Commit)
		if err != nil {
			return fmt.Errorf("combining %s: %w", untrusted.Escape(it.Item), err)
		}
		w.r.Event("combine", map[string]any{"step": st.Name, "index": it.Index, "item": it.Item, "commit": it.Commit, "conflict": conflict})
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

// verify runs the final verify on the combined branch; only a green verdict offers the branch.
func (w *run) verify(ctx context.Context, r *engine.Run) error {
	kept, red := 0, 0
	for _, it := range w.items {
		switch {
		case it.Green() && it.Commit != "":
			kept++
		case !it.Green():
			red++
		}
	}
	r.Detail("kept", kept)
	r.Detail("red", red)
	if !w.edits() {
		w.status = StatusCompleted
		r.Detail("status", w.status)
		if red > 0 {
			return &engine.RedError{Reason: fmt.Sprintf("%d of %d items did not end green", red, len(w.items))}
		}
		return nil
	}
	if kept == 0 {
		w.status = StatusNoChange
		r.Detail("status", w.status)
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
		r.Detail("status", w.status)
		return err
	}
	var exit any
	if vr.Exited {
		exit = vr.ExitCode
	}
	r.Event("verify", map[string]any{"round": 1, "verdict": vr.Verdict(), "exit": exit, "duration_ms": time.Since(start).Milliseconds(), "tail": string(vr.Output)})
	r.Detail("verify_exit", exit)
	r.Detail("verify_verdict", vr.Verdict())
	if !vr.Exited || vr.ExitCode != 0 {
		w.status = StatusVerifyFailed
		r.Detail("status", w.status)
		r.Detail("verify_tail", string(vr.Output))
		return &engine.RedError{Reason: fmt.Sprintf("the final verify failed on the combined branch (%s): the branch is not offered", vr.Verdict())}
	}
	w.offered = true
	w.status = StatusCompleted
	r.Detail("status", w.status)
	r.Detail("branch", w.branch)
	r.Detail("commit", w.head)
	r.Event("commit", map[string]any{"commit": w.head, "branch": w.branch})
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
		errs = append(errs, w.g.removeWorktree(ctx, w.combine))
	}
	if w.r != nil {
		errs = append(errs, removeRunWorktrees(ctx, w.g, w.r.ID))
		if !w.offered {
			errs = append(errs, agent.DeleteBranch(ctx, w.place.Root, w.branch))
		}
		if w.status != "" && w.status != StatusInterrupted {
			errs = append(errs, w.g.deleteItemRefs(ctx, w.r.ID))
			if w.resumedOf != "" {
				errs = append(errs, w.g.deleteItemRefs(ctx, w.resumedOf))
			}
		} else if w.status == "" && w.started {
			// Stopped by an error after items ran: what they did is kept for a resume.
			w.status = StatusInterrupted
			w.r.Detail("status", w.status)
		}
	}
	return errors.Join(errs...)
}

// sawModel records the model the items ran, when they all ran one.
func (w *run) sawModel(m string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch w.r.Spec.Model {
	case "":
		w.r.Spec.Model = m
	case m:
	default:
		w.r.Spec.Model = "(several)"
	}
}

// addUsage counts an item in the run's receipt, with its tokens where the server reported them.
func (w *run) addUsage(res *engine.Result) {
	if res.In == nil && res.Out == nil && res.Attempts == 0 {
		return // asked no model: nothing to count, and no unknown to count either
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.r.AddUsage(client.Usage{In: res.In, Out: res.Out}, time.Duration(res.TimeMs)*time.Millisecond)
}

func errMessage(r *engine.Result) string {
	if r.Error != nil {
		return r.Error.Message
	}
	return ""
}

func commitMessage(workflow, step, item string) string {
	return fmt.Sprintf("locum run %s: %s %s", workflow, step, item)
}

// oneLine is the first line of s, its control characters escaped.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return untrusted.Escape(s)
}

func capBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n[cut at " + fmt.Sprint(n) + " bytes]\n"
}

// ItemLine is one item's line in a run's output: its step, number, status and outcome.
func ItemLine(it ItemResult) string {
	line := fmt.Sprintf("%s %d %s %s", untrusted.Escape(it.Step), it.Index, untrusted.Escape(it.Status), untrusted.Escape(it.Item))
	if it.Outcome != "" {
		line += ": " + untrusted.Escape(it.Outcome)
	}
	return line
}

// outcome is the run's one line: what it combined, and what the person does next.
func outcome(r *engine.Result) string {
	d := r.Details
	if d == nil || d["workflow"] == nil {
		return ""
	}
	items, _ := d["items"].([]ItemResult)
	if len(items) == 0 {
		return ""
	}
	green, red := 0, 0
	for _, it := range items {
		if it.Green() {
			green++
		} else {
			red++
		}
	}
	line := fmt.Sprintf("workflow %s: %d of %d items green", untrusted.Escape(fmt.Sprint(d["workflow"])), green, len(items))
	if red > 0 {
		line += fmt.Sprintf(", %d not", red)
	}
	switch d["status"] {
	case StatusCompleted:
		if b, ok := d["branch"].(string); ok {
			line += fmt.Sprintf("; the final verify passed on %s (%v kept): read it with locum runs show --diff %s, then runs accept or runs reject", b, d["kept"], r.RunID)
		}
	case StatusVerifyFailed:
		line += fmt.Sprintf("; the final verify failed on the combined branch (%v), which was dropped", cmp.Or(fmt.Sprint(d["verify_verdict"]), "no verdict"))
	case StatusNoChange:
		line += "; no change to combine"
	case StatusInterrupted:
		if why, ok := d["resume"].(string); ok {
			line += "; interrupted, and it cannot be resumed: " + why
			break
		}
		line += fmt.Sprintf("; interrupted: locum run --resume %s goes on without redoing the green items", r.RunID)
	}
	return line
}
