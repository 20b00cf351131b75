// Package bench compares models on the same tasks: every chat model the pool's servers list (or
// those named), each task asked of each model as a cell, every cell a job of its mode run through
// the job layer under the same rails as a single call, in a worktree of its own at the task's
// commit, spread over the pool as a workflow's items are. Its tasks are the pack's eval tasks
// graded by their predicates, a bench folder's (spec/bench.md), or the person's own past
// delegations replayed from their sealed journals. It sits above the job layer, as the workflow
// does: routing stays aside, since a bench names its models, and it earns a role nothing by
// itself (locum roles accept --from-bench records its figures in an acceptance).
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/pool"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Mode is the bench mode: it asks no model itself; its cells do, each of the model it names.
var Mode = engine.Mode{Name: "bench", Model: engine.NoModel, Measures: true, Outcome: outcome,
	Settings: slices.Concat(packs.VerifySettings, packs.HostSettings, []packs.Key{packs.Jobs, packs.Servers})}

func init() { engine.RegisterMode(Mode) }

// The closed list of a bench run's statuses (details.status).
const (
	// StatusCompleted: every cell ran to an outcome; the table holds them all.
	StatusCompleted = "completed"
	// StatusInterrupted: the run stopped before its last cell; locum bench --resume ID goes on.
	StatusInterrupted = "interrupted"
)

// Job is a request to run a bench, or to resume one.
type Job struct {
	// Layer prepares each cell as a job of its mode; Call is the front end's call, which each
	// cell's call copies.
	Layer *job.Layer
	Call  job.Call
	// Models are the models to compare; empty for every chat model the pool's servers list.
	Models []string
	// Evals says the pack's eval tasks are tasks of the bench; EvalTasks gives them (a front end
	// sets it whether or not, for a resumed bench that used them).
	Evals     bool
	EvalTasks func() []PromptTask
	// Folder is a bench folder (spec/bench.md); "" for none.
	Folder string
	// Replay is how many of the person's last delegations of ReplayMode to replay; 0 for none.
	Replay     int
	ReplayMode string
	// Resume, instead, is the id of an interrupted bench to go on with, over the models and
	// tasks it ran with.
	Resume string
	// Progress, when set, hears each cell start and end.
	Progress func(Progress)
}

// Mode is the bench mode.
func (*Job) Mode() engine.Mode { return Mode }

// Progress is the state of a bench's cells after one started or ended.
type Progress struct {
	Total, Done, Running int
	// Started is the cell that just started; Ended the one that just ended. One is set.
	Started, Ended *engine.BenchCell
}

// Details are a bench run's part of its result and of its journal's run_end
// (spec/bench-result.schema.json).
type Details struct {
	// Resume says why the run cannot be resumed, where it has no operator key to seal with;
	// ResumedFrom is the run it resumes.
	Resume      string `json:"resume,omitempty"`
	ResumedFrom string `json:"resumed_from,omitempty"`
	// Tasks are the bench's tasks; LeftOut the delegations it did not replay, and why, with
	// LeftOutMore those past the ones named.
	Tasks       []engine.BenchTask `json:"tasks"`
	LeftOut     []LeftOut          `json:"left_out"`
	LeftOutMore int                `json:"left_out_more,omitempty"`
	// Servers are the pool's servers that answered, with their counts; Models the models run.
	Servers []pool.Server       `json:"servers"`
	Models  []engine.BenchModel `json:"models"`
	// Rows are the table, a row per model; Cells every cell that ended.
	Rows  []Row              `json:"rows"`
	Cells []engine.BenchCell `json:"cells"`
	// Status is the run's closed status, once it has one.
	Status string `json:"status,omitempty"`
}

// Steps are the bench's steps: scope (its tasks, from their sources or a resumed run's),
// servers (each endpoint of the pool probed, the models each lists and their weights), cells
// (every task asked of every model over the pool), and table (a row per model).
func (j *Job) Steps(p engine.Place) []engine.Step {
	w := &run{job: j, place: p, g: gitsafe.NewWorktrees(p.Root)}
	return []engine.Step{
		{Name: "scope", Run: w.scope},
		{Name: "servers", Run: w.servers},
		{Name: "cells", Run: w.cells},
		{Name: "table", Run: w.table},
	}
}

// run is the state of one bench run.
type run struct {
	job   *Job
	place engine.Place
	r     *engine.Run
	g     *gitsafe.Worktrees

	// key is the operator's, which seals what the run journals for a resume and tells the
	// journals a replay may read; noKey says why there is none.
	key   []byte
	noKey error
	seal  engine.FieldSeal

	models     []string
	evals      bool
	folder     string
	replayRuns []string
	replayMode string
	tasks      []task
	// refs are the refs the run made for its tasks' snapshot commits, removed as it ends.
	refs []string

	pool *pool.Pool
	// listing is, for each model, the pool's servers that list it; weights each server's
	// identity of each model's weights.
	listing map[string][]int
	weights []map[string]string
	listed  [][]string
	// cellsDir holds the cells' journals, apart from the runs the ledger counts.
	cellsDir string

	prior     map[string]engine.BenchCell
	resumedOf string

	mu     sync.Mutex
	status string
	d      Details
}

func (w *run) scope(ctx context.Context, r *engine.Run) error {
	w.r = r
	r.SetDetails(&w.d)
	r.Guard("worktrees", w.cleanup)
	w.d.Tasks, w.d.LeftOut, w.d.Servers, w.d.Models, w.d.Rows, w.d.Cells = []engine.BenchTask{}, []LeftOut{}, []pool.Server{}, []engine.BenchModel{}, []Row{}, []engine.BenchCell{}
	if err := w.job.Layer.CheckCallModel(w.job.Call); err != nil {
		return err
	}
	w.noKey = errors.New("no operator key")
	if w.place.OperatorKey != nil {
		w.key, w.noKey = w.place.OperatorKey()
	}
	if w.noKey != nil {
		w.key = nil
		w.d.Resume = "no operator key to seal its journal with (" + oneLine(w.noKey.Error()) + ")"
	}
	w.seal = engine.FieldSeal{Key: w.key, Version: sealVersion}
	j := w.job
	w.models, w.evals, w.folder, w.replayMode = j.Models, j.Evals, j.Folder, j.ReplayMode
	if j.Resume != "" {
		if err := w.readPrior(ctx); err != nil {
			return err
		}
	}
	// Every edit task runs in a worktree of its own: refuse before any where there is no place
	// for one that stays in the repository's git directory.
	if _, err := gitsafe.WorktreeDir(w.place.Root, r.ID); err != nil {
		return err
	}
	if w.cellsDir = gitsafe.GitPath(w.place.Root, "locum/bench/"+r.ID); w.cellsDir == "" {
		return &gitsafe.WorktreePlaceError{Root: w.place.Root, ID: r.ID}
	}
	if err := w.makeTasks(ctx); err != nil {
		return err
	}
	if len(w.tasks) == 0 {
		return engine.BadInputf("the bench has no task: %s", w.noTaskWords())
	}
	for _, t := range w.tasks {
		w.d.Tasks = append(w.d.Tasks, engine.BenchTask{Key: t.key, Source: t.source, Fingerprint: t.fingerprint})
	}
	w.d.ResumedFrom = w.resumedOf
	r.Emit(engine.BenchEvent{Models: nilIfNone(w.models), Evals: w.evals, Folder: w.folder, Replay: nilIfNone(w.replayRuns), ReplayMode: w.replayMode,
		Tasks: w.d.Tasks, ResumedFrom: nilIfEmpty(w.resumedOf), Seal: nilIfEmpty(w.seal.MAC(w.benchFields(r.ID, w.d.Tasks)...))})
	return nil
}

// noTaskWords says why a bench found no task.
func (w *run) noTaskWords() string {
	if len(w.d.LeftOut) > 0 {
		return fmt.Sprintf("no delegation of %s could be replayed (%d left out: %s)", w.replayMode, len(w.d.LeftOut)+w.d.LeftOutMore, untrusted.Escape(w.d.LeftOut[0].Why))
	}
	if w.replayMode != "" && w.folder == "" && !w.evals {
		return "the journals hold no sealed delegation of " + w.replayMode + " to replay"
	}
	return "name its tasks (the pack's eval tasks, a bench folder, or delegations to replay)"
}

// makeTasks makes the bench's tasks from its sources, in a stable order: the eval tasks, the
// folder's, then the delegations replayed, newest first.
func (w *run) makeTasks(ctx context.Context) error {
	if w.evals {
		if w.job.EvalTasks == nil {
			return engine.BadInputf("the bench asks for the pack's eval tasks, which this front end does not give")
		}
		for _, pt := range w.job.EvalTasks() {
			w.tasks = append(w.tasks, task{key: SourceEvals + "/" + pt.ID, source: SourceEvals, fingerprint: fingerprintOf(SourceEvals, pt.Fingerprint), prompt: &pt})
		}
	}
	if w.folder != "" {
		tasks, err := w.folderTasks(ctx)
		if err != nil {
			return err
		}
		w.tasks = append(w.tasks, tasks...)
	}
	if w.replayMode != "" && (w.job.Replay > 0 || w.replayRuns != nil) {
		tasks, left, more, err := w.replays(ctx, w.replayMode, w.job.Replay, w.replayRuns)
		if err != nil {
			return err
		}
		if left != nil {
			w.d.LeftOut = left
		}
		w.d.LeftOutMore = more
		w.replayRuns = []string{}
		for _, t := range tasks {
			w.replayRuns = append(w.replayRuns, strings.TrimPrefix(t.key, SourceReplay+"/"))
		}
		w.tasks = append(w.tasks, tasks...)
	}
	return nil
}

// servers probes each endpoint of the pool under the loopback rail: what it is, the requests it
// decodes at once, the chat models it lists and their weights. A server that does not answer
// has no cell; only a pool where none answers stops the bench.
func (w *run) servers(ctx context.Context, r *engine.Run) error {
	s := r.Spec.Settings
	probed, err := pool.Probe(ctx, s, r.Spec.Dial, r.Spec.Transport)
	if err != nil {
		return err
	}
	var up []pool.Probed
	var down []error
	for _, p := range probed {
		if p.Err != nil {
			down = append(down, fmt.Errorf("server %s: %w", untrusted.Escape(p.URL), p.Err))
			continue
		}
		up = append(up, p)
	}
	if len(up) == 0 {
		return errors.Join(down...)
	}
	for _, err := range down {
		if r.Spec.Stderr != nil {
			fmt.Fprintf(r.Spec.Stderr, "locum bench: warning: %s: it runs no cell\n", untrusted.EscapeLines(err.Error()))
		}
	}
	jobs := int(s.Int(packs.Jobs))
	servers := pool.Servers(up, jobs)
	w.pool = pool.New(servers, jobs)
	w.listing = map[string][]int{}
	w.weights = make([]map[string]string, len(up))
	w.listed = make([][]string, len(up))
	var all []string
	for i, p := range up {
		w.weights[i] = p.Client.ModelWeights(ctx)
		for _, m := range p.Info.Models {
			if p.Info.IsEmbedding(m) {
				continue
			}
			w.listed[i] = append(w.listed[i], m.ID)
			if !slices.Contains(all, m.ID) {
				all = append(all, m.ID)
			}
		}
	}
	models := w.models
	if len(models) == 0 {
		models = all
	}
	if len(models) == 0 {
		return engine.BadInputf("no server of the pool lists a chat model to bench")
	}
	for _, m := range models {
		bm := engine.BenchModel{Model: m, Servers: []string{}}
		for i, p := range up {
			if p.Info.Has(m) {
				w.listing[m] = append(w.listing[m], i)
				bm.Servers = append(bm.Servers, p.URL)
				if bm.Weights == "" {
					bm.Weights = w.weightsOf(i, m)
				}
			}
		}
		w.d.Models = append(w.d.Models, bm)
	}
	w.d.Servers = servers
	r.Emit(engine.ServersEvent{Servers: servers, Jobs: jobs})
	r.Emit(engine.BenchModelsEvent{Models: w.d.Models})
	return nil
}

// weightsOf is server i's identity of model's weights: Ollama lists name:tag and answers the bare
// name for :latest.
func (w *run) weightsOf(i int, model string) string {
	return cmp.Or(w.weights[i][model], w.weights[i][model+":latest"])
}

// cells asks every task of every model: cells carried from the run resumed first, then the rest,
// each waiting for a server of the pool that lists its model, at most jobs at once.
func (w *run) cells(ctx context.Context, r *engine.Run) error {
	type todo struct {
		t     task
		model string
		index int
	}
	var list []todo
	for ti, t := range w.tasks {
		for mi, m := range w.d.Models {
			list = append(list, todo{t: t, model: m.Model, index: ti*len(w.d.Models) + mi + 1})
		}
	}
	total, done, running := len(list), 0, 0
	// step counts a cell that started, or one that ended (ran: on a server), and reports the
	// counts as they are then.
	step := func(started, ended *engine.BenchCell, ran bool) {
		w.mu.Lock()
		switch {
		case started != nil:
			running++
		case ran:
			running--
			done++
		default:
			done++
		}
		p := Progress{Total: total, Done: done, Running: running, Started: started, Ended: ended}
		w.mu.Unlock()
		if w.job.Progress != nil {
			w.job.Progress(p)
		}
	}
	end := func(c engine.BenchCell, carried bool) {
		w.mu.Lock()
		w.d.Cells = append(w.d.Cells, c)
		w.mu.Unlock()
		sealed := nilIfEmpty(w.seal.MAC(cellFields(r.ID, c)...))
		if carried {
			r.Emit(engine.CellCarriedEvent{BenchCell: c, Seal: sealed})
		} else {
			r.Emit(engine.CellEndEvent{BenchCell: c, Seal: sealed})
		}
	}
	var rest []todo
	for _, c := range list {
		if prev, ok := w.reusable(c.t, c.model); ok {
			end(prev, true)
			step(nil, &prev, false)
			continue
		}
		rest = append(rest, c)
	}
	var wg sync.WaitGroup
	for _, c := range rest {
		servers := w.listing[c.model]
		if len(servers) == 0 {
			cell := w.unlisted(c.t, c.model)
			end(cell, false)
			step(nil, &cell, false)
			continue
		}
		wg.Go(func() {
			srv := w.pool.AcquireAmong(ctx, func(i int) bool { return slices.Contains(servers, i) })
			if srv < 0 {
				return // stopped: a resume runs it
			}
			cell := engine.BenchCell{Task: c.t.key, Model: c.model, Server: w.pool.URL(srv), Fingerprint: c.t.fingerprint, Weights: w.weightsOf(srv, c.model)}
			r.Emit(engine.CellStartEvent{Task: cell.Task, Model: cell.Model, Server: cell.Server})
			started := cell
			step(&started, nil, false)
			w.runCell(ctx, c.t, c.index, &cell)
			if ctx.Err() != nil && !measured(cell) {
				// Stopped part way: not on record, so a resume runs it again.
				w.pool.Release(srv, false)
				w.mu.Lock()
				running--
				w.mu.Unlock()
				return
			}
			// Journaled before the server is free for the next cell: a run killed after this
			// line has the cell on record for its resume.
			end(cell, false)
			w.pool.Release(srv, cell.Status == string(engine.StatusOK))
			step(nil, &cell, true)
		})
	}
	wg.Wait()
	w.d.Servers = w.pool.Snapshot()
	if ctx.Err() != nil {
		w.status = StatusInterrupted
		w.d.Status = w.status
		return context.Cause(ctx)
	}
	return nil
}

// unlisted is the cell of a model no server of the pool lists: refused before any request, as
// a single call naming it would be.
func (w *run) unlisted(t task, model string) engine.BenchCell {
	var listed []string
	for _, l := range w.listed {
		listed = append(listed, l...)
	}
	err := &engine.ModelNotListedError{Model: model, Endpoint: "no server of the pool", Listed: listed, Refused: true}
	status, kind, _ := engine.Classify(err)
	return engine.BenchCell{Task: t.key, Model: model, Fingerprint: t.fingerprint, Status: string(status), Kind: kind,
		Outcome: oneLine(fmt.Sprintf("no server of the pool lists %s (they list %s)", model, cmp.Or(strings.Join(listed, ", "), "no chat model")))}
}

// table orders the cells as the tasks and models are and makes a row per model.
func (w *run) table(_ context.Context, _ *engine.Run) error {
	w.sortCells()
	w.d.Rows = Rows(w.d.Models, w.d.Cells)
	w.status = StatusCompleted
	w.d.Status = w.status
	return nil
}

// sortCells puts the cells in task order, then model order: they end in no fixed order.
func (w *run) sortCells() {
	taskAt := map[string]int{}
	for i, t := range w.tasks {
		taskAt[t.key] = i
	}
	modelAt := map[string]int{}
	for i, m := range w.d.Models {
		modelAt[m.Model] = i
	}
	slices.SortStableFunc(w.d.Cells, func(a, b engine.BenchCell) int {
		return cmp.Or(cmp.Compare(taskAt[a.Task], taskAt[b.Task]), cmp.Compare(modelAt[a.Model], modelAt[b.Model]))
	})
}

// cleanup removes every worktree the run made and the refs of its snapshot commits; the cells'
// journals stay, for a person to read.
func (w *run) cleanup() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if w.r == nil {
		return nil
	}
	if w.status == "" {
		w.sortCells()
		if len(w.d.Cells) > 0 || w.pool != nil {
			// Stopped by an error after cells ran: what they did is kept for a resume.
			w.status = StatusInterrupted
			w.d.Status = w.status
		}
	}
	errs := []error{w.g.RemoveRun(ctx, w.r.ID)}
	for _, ref := range w.refs {
		if _, err := w.g.Locked(ctx, w.place.Root, "update-ref", "-d", ref); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// cellJournal is where a cell's run journals: apart from the runs dir, so the ledger, the
// break-even and a later replay count no cell as a delegation of the person's.
func (w *run) cellJournal(index int) string {
	return filepath.Join(w.cellsDir, fmt.Sprintf("cell-%04d.jsonl", index))
}

// oneLine is the first line of s, its control characters escaped.
func oneLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return untrusted.Escape(s)
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nilIfNone(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
