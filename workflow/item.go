package workflow

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// runStep runs a step's items, at most jobs at once over the pool, and returns them in order;
// the error is a refusal of the step before any of its items ran (redBaseline).
func (w *run) runStep(ctx context.Context, st packs.WorkflowStep, list []Item, vars map[string]string) ([]ItemResult, error) {
	results := make([]ItemResult, len(list))
	var wg sync.WaitGroup
	var done, red, running int
	// Each server's items of this step, so that its counts add up to the step's.
	per := make([]Server, w.pool.Len())
	var mu sync.Mutex
	report := func(started, ended *ItemResult) {
		if w.job.Progress == nil {
			return
		}
		mu.Lock()
		servers := append([]Server(nil), per...)
		p := Progress{Step: st.Name, Total: len(list), Done: done, Red: red, Running: running, Servers: servers, Started: started, Item: ended}
		mu.Unlock()
		w.job.Progress(p)
	}
	// count counts an item that ended, srv the server it ran on or -1 for none.
	count := func(i, srv int) {
		mu.Lock()
		defer mu.Unlock()
		green := results[i].Green()
		if green {
			done++
		} else {
			red++
		}
		if srv < 0 {
			return
		}
		running--
		per[srv].Running--
		if green {
			per[srv].Done++
		} else {
			per[srv].Red++
		}
	}
	ended := func(i int) {
		w.r.Emit(w.itemEvent(results[i]))
		count(i, -1)
		report(nil, &results[i])
	}
	for i, s := range w.pool.Snapshot() {
		per[i] = Server{URL: s.URL, Kind: s.Kind, Slots: s.Slots, Capacity: s.Capacity}
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
	if err := w.redBaseline(ctx, st, inputs, todo); err != nil {
		status, kind, _ := engine.Classify(err)
		for _, i := range todo {
			results[i].Status, results[i].Outcome = string(status), "not run: "+oneLine(err.Error())
			if kind == KindRedBaseline {
				results[i].Baseline = engine.BaselineRed
				results[i].Outcome = "not run: the verify every item of the step is judged by already fails before any edit"
			}
			ended(i)
		}
		return results, err
	}
	for _, i := range todo {
		srv := w.pool.Acquire(ctx)
		if srv < 0 {
			results[i].Status = string(engine.StatusError)
			results[i].Outcome = "not started: the run was stopped"
			continue
		}
		w.started = true
		results[i].Server = w.pool.URL(srv)
		w.r.Emit(engine.ItemStartEvent{Step: st.Name, Index: i + 1, Item: list[i].Key, Server: results[i].Server})
		mu.Lock()
		running++
		per[srv].Running++
		started := results[i]
		mu.Unlock()
		report(&started, nil)
		wg.Add(1)
		go func(i, srv int) {
			defer wg.Done()
			w.runItem(ctx, st, list[i], inputs[i], &results[i])
			// Journaled before the server is free for the next item: a run killed after this
			// line has the item on record for its resume. Reported after, with the counts it
			// ended with.
			w.r.Emit(w.itemEvent(results[i]))
			count(i, srv)
			w.pool.Release(srv, results[i].Green())
			report(nil, &results[i])
		}(i, srv)
	}
	wg.Wait()
	return results, nil
}

// list is a step's items, as the commit its items start from has them: a file the working tree
// holds and the commit does not is no item, as it would be none in the item's worktree.
func (w *run) list(ctx context.Context, st packs.WorkflowStep, vars map[string]string) ([]Item, error) {
	if st.ForEach == nil {
		return expand(w.place.Root, st, vars)
	}
	wt, err := gitsafe.WorktreeDir(w.place.Root, w.r.ID+"/list-"+st.Name)
	if err == nil {
		wt, err = w.g.AddDetached(ctx, wt, w.head, false)
	}
	if err != nil {
		return nil, err
	}
	defer w.g.Drop(ctx, wt)
	return expand(wt, st, vars)
}

// itemInputs are one item's inputs, expanded, and their fingerprint: a resumed run's item is
// taken only where it had the same, at the same tree.
type itemInputs struct {
	vars map[string]string
	with map[string]string
	// verify is the workflow's verify, for a step that edits and gives none of its own.
	verify string
	// judge is the verify the item is judged by: its step's own, else verify.
	judge       string
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
		decl, _ := packs.StepInputOf(st.Mode, k)
		var v string
		var err error
		if decl.Kind == packs.InputVerify {
			v, err = packs.ExpandCommand(tmpl, iv, asWritten)
			in.judge = v
		} else {
			v, err = packs.Expand(tmpl, iv)
		}
		if err != nil {
			return in, engine.BadInputf("step %s: with.%s: %v", st.Name, k, err)
		}
		// A pack wrote the path: it names the repository's own files, from its root, whatever
		// the mode would take from the operator.
		if decl.Kind == packs.InputPath && !filepath.IsLocal(v) && v != "." {
			return in, engine.Refusalf("step %s: with.%s %s: outside the repository; a workflow's item reads the repository's files only, named from its root", st.Name, k, untrusted.Escape(v))
		}
		// The item's own scope refuses it too, in its worktree; refused here, no worktree is made.
		if decl.Kind == packs.InputPath && packs.StepEdits(st.Mode) && gitsafe.NamesGitDir(v) {
			return in, fmt.Errorf("step %s: with.%s: %w", st.Name, k, &gitsafe.GitDirError{Path: v, Dir: ".git"})
		}
		in.with[k] = v
	}
	if _, own := st.OwnVerify(); !own && packs.StepEdits(st.Mode) {
		v, err := packs.ExpandCommand(w.wf.Verify, iv, asWritten)
		if err != nil {
			return in, engine.BadInputf("verify: %v", err)
		}
		in.verify, in.judge = v, v
	}
	data, err := json.Marshal([]any{st.Mode, it.Key, in.with, in.verify, w.headTree})
	if err != nil {
		return in, err
	}
	sum := sha256.Sum256(data)
	in.fingerprint = hex.EncodeToString(sum[:])
	return in, nil
}

func (w *run) itemEvent(it ItemResult) engine.ItemEndEvent {
	return engine.ItemEndEvent{Step: it.Step, Index: it.Index, Item: it.Item, Server: it.Server, RunID: nilIfEmpty(it.RunID),
		Status: it.Status, Outcome: it.Outcome, Commit: nilIfEmpty(it.Commit), Output: nilIfEmpty(it.Output),
		Inputs: nilIfEmpty(it.Inputs), VerifyStrength: nilIfEmpty(it.VerifyStrength), Baseline: nilIfEmpty(it.Baseline), Seal: nilIfEmpty(w.seal.item(w.r.ID, it))}
}

// deref is a text an event may leave null, "" where it does.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
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
	wt, err := gitsafe.WorktreeDir(w.place.Root, fmt.Sprintf("%s/%s-%04d", w.r.ID, st.Name, res.Index))
	if err == nil {
		wt, err = w.g.AddDetached(ctx, wt, w.head, false)
	}
	if err != nil {
		fail(err)
		return
	}
	defer w.g.Drop(ctx, wt)
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
	if r.Handoff != nil {
		w.mu.Lock()
		w.handoffs = append(w.handoffs, engine.ItemHandoff{Step: st.Name, Index: res.Index, Item: it.Key, Run: r.RunID, Handoff: r.Handoff})
		w.mu.Unlock()
	}
	if r.Baseline != nil {
		res.Baseline = *r.Baseline
	}
	if r.VerifyStrength != nil {
		res.VerifyStrength = *r.VerifyStrength
	}
	// An item that did not end green says why after what became of it ("restored ...: the
	// verify command still exits 1"), in the first line of its error.
	res.Outcome = r.Outcome()
	if why, _, _ := strings.Cut(errMessage(r), "\n"); why != "" && res.Outcome != "" {
		res.Outcome += ": " + why
	}
	res.Outcome = oneLine(cmp.Or(res.Outcome, errMessage(r)))
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
	file := engine.SpanOf(r.Details).File
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

// itemJob is the job of a step's mode for one item, the settings its inputs set, and what the
// item passes forward once its run is green.
func itemJob(st packs.WorkflowStep, with, vars map[string]string, verify string) (engine.Job, map[string]string, func() string, error) {
	mode, ok := engine.LookupMode(st.Mode)
	if !ok {
		return nil, nil, nil, engine.BadInputf("step %s: a workflow runs %s steps, not %s", st.Name, strings.Join(packs.StepModes(), ", "), untrusted.Escape(st.Mode))
	}
	sj, err := mode.BuildStep(with, vars, verify)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("step %s: %w", st.Name, err)
	}
	out := sj.Output
	if out == nil {
		out = func() string { return "" }
	}
	return sj.Job, sj.Args, out, nil
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

// addUsage counts an item's requests in the run's receipt, with its tokens where the server
// reported them.
func (w *run) addUsage(res *engine.Result) {
	if res.In == nil && res.Out == nil && res.Attempts == 0 {
		return // asked no model: nothing to count, and no unknown to count either
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.r.AddRequests(res.Attempts, client.Usage{In: res.In, Out: res.Out}, time.Duration(res.TimeMs)*time.Millisecond)
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
