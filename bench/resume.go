package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// sealVersion names what a bench's seals cover, so a seal of another layout never verifies.
const sealVersion = "locum bench resume 1"

// benchFields are what the seal of a bench event covers: the run, its models and its sources,
// and every task's fingerprint.
func (w *run) benchFields(runID string, tasks []engine.BenchTask) []any {
	return []any{"bench", runID, nilIfNone(w.models), w.evals, w.folder, nilIfNone(w.replayRuns), w.replayMode, tasks}
}

// cellFields are what the seal of a cell covers: the run and every field of the cell.
func cellFields(runID string, c engine.BenchCell) []any { return []any{"cell", runID, c} }

func cellKey(task, model string) string { return task + "\x00" + model }

// readPrior reads the journal of the bench to resume: its models and sources, and its cells. The
// journal is the repository's file, so what it says is taken only where its seal holds under the
// operator's key: the bench event, so the sources and tasks are the ones locum ran; each cell,
// so its figures are the ones its run gave. A cell is taken again only where it measured the
// model (its run kept the work or not) and its task and the model's weights are the same now
// (reusable); every other cell runs again.
func (w *run) readPrior(ctx context.Context) error {
	id := w.job.Resume
	if w.key == nil {
		return engine.Refusalf("--resume: %s: no operator key to check the journal of run %s with", oneLine(w.noKey.Error()), untrusted.Escape(id))
	}
	dir, err := engine.RunsDir(w.place.Root)
	if err != nil {
		return err
	}
	path, events, err := engine.ReadRun(dir, id)
	if err != nil {
		return engine.BadInputf("--resume %s: %v", untrusted.Escape(id), err)
	}
	id = strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !engine.ValidRunID(id) {
		return engine.BadInputf("--resume: %q is not the name of a run journal locum writes", filepath.Base(path))
	}
	var (
		isBench, sealed bool
		ended           string
		prior           = map[string]engine.BenchCell{}
	)
	for _, ev := range events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			isBench = e.Mode == Mode.Name
		case "bench":
			e, _ := engine.DecodeEvent[engine.BenchEvent](ev)
			w.models, w.evals, w.folder, w.replayRuns, w.replayMode = e.Models, e.Evals, e.Folder, e.Replay, e.ReplayMode
			sealed = e.Seal != nil && w.seal.OK(*e.Seal, w.benchFields(id, e.Tasks)...)
		case "cell_end", "cell_carried":
			e, ok := engine.DecodeEvent[engine.CellEndEvent](ev)
			if !ok {
				carried, _ := engine.DecodeEvent[engine.CellCarriedEvent](ev)
				e = engine.CellEndEvent(carried)
			}
			if e.Seal == nil || !w.seal.OK(*e.Seal, cellFields(id, e.BenchCell)...) || !measured(e.BenchCell) {
				continue
			}
			prior[cellKey(e.Task, e.Model)] = e.BenchCell
		case "run_end":
			e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
			ended = cmpOr(engine.DecodeDetails[Details](e.Details).Status, "ended")
		}
	}
	switch {
	case !isBench:
		return engine.BadInputf("--resume: run %s is not a bench run", id)
	case !sealed:
		return engine.Refusalf("--resume: the journal of run %s does not carry this operator's seal over its models and tasks: it is not a run locum made here, or it was changed since; start the bench again", id)
	case ended != "" && ended != StatusInterrupted:
		return engine.Refusalf("--resume: run %s ended (%s): nothing to resume; start the bench again", id, untrusted.Escape(ended))
	}
	if w.replayRuns == nil && w.replayMode != "" {
		w.replayRuns = []string{}
	}
	w.prior, w.resumedOf = prior, id
	// A run killed outright left its worktrees and the refs of its snapshots; both are locum's,
	// made again where needed.
	if err := w.g.RemoveRun(ctx, id); err != nil {
		return fmt.Errorf("removing the worktrees run %s left: %w", id, err)
	}
	out, err := gitsafe.Run(ctx, w.place.Root, "for-each-ref", "--format=%(refname)", snapshotRefPrefix+id+"/")
	if err != nil {
		return err
	}
	for _, ref := range strings.Fields(out) {
		if _, err := w.g.Locked(ctx, w.place.Root, "update-ref", "-d", ref); err != nil {
			return err
		}
	}
	return nil
}

// reusable is the cell of model on t the run resumed measured, where its task is the same now and
// some server of the pool still serves the weights it measured.
func (w *run) reusable(t task, model string) (engine.BenchCell, bool) {
	prev, ok := w.prior[cellKey(t.key, model)]
	if !ok || prev.Fingerprint != t.fingerprint {
		return engine.BenchCell{}, false
	}
	same := slices.ContainsFunc(w.listing[model], func(i int) bool { return w.weightsOf(i, model) == prev.Weights })
	return prev, same
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
