package workflow

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// readPrior reads the journal of the run to resume: the workflow and parameters it ran with, its
// base, and its green items. The journal is the repository's file, so what it says is checked
// before use: the run must be a workflow run that did not end, its workflow event sealed with the
// operator's key (so the base and parameters are the ones locum ran with), the workflow's
// definition the one that event's fingerprint names, and each green item sealed too, its commit the one locum's own ref for that item still holds; an item that fails a
// check is run again.
func (w *run) readPrior(ctx context.Context, c *packs.Composition) (string, map[string]string, error) {
	dir, err := engine.RunsDir(w.place.Root)
	if err != nil {
		return "", nil, err
	}
	path, events, err := engine.ReadRun(dir, w.job.Resume)
	if err != nil {
		return "", nil, engine.BadInputf("--resume %s: %v", untrusted.Escape(w.job.Resume), err)
	}
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	if !engine.ValidRunID(id) {
		return "", nil, engine.BadInputf("--resume: %q is not the name of a run journal locum writes", filepath.Base(path))
	}
	var (
		name   string
		def    string
		params = map[string]string{}
		base   string
		sealed bool
		isWF   bool
		ended  string
		prior  = map[string]ItemResult{}
	)
	if w.noSeal != nil {
		return "", nil, engine.Refusalf("--resume: %s: no operator key to check the journal of run %s with", oneLine(w.noSeal.Error()), id)
	}
	for _, ev := range events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			isWF = e.Mode == Mode.Name
		case "workflow":
			e, _ := engine.DecodeEvent[engine.WorkflowEvent](ev)
			name, base, def = e.Name, e.Base, e.Definition
			maps.Copy(params, e.Params)
			sealed = gitsafe.ValidSHA(base) && w.seal.ok(deref(e.Seal), w.seal.runFields(id, name, def, base, params)...)
		case "item_end", "item_carried":
			e, ok := engine.DecodeEvent[engine.ItemEndEvent](ev)
			if !ok {
				carried, _ := engine.DecodeEvent[engine.ItemCarriedEvent](ev)
				e = engine.ItemEndEvent(carried)
			}
			it := ItemResult{Step: e.Step, Index: e.Index, Item: e.Item, Status: e.Status, RunID: deref(e.RunID), Commit: deref(e.Commit),
				Outcome: e.Outcome, Output: deref(e.Output), Inputs: deref(e.Inputs)}
			if !it.Green() || it.Step == "" || it.Item == "" {
				continue
			}
			if !w.seal.ok(deref(e.Seal), w.seal.itemFields(id, it)...) {
				continue
			}
			if it.Commit != "" && (!gitsafe.ValidSHA(it.Commit) || refCommit(ctx, w.place.Root, itemRef(id, it.Step, it.Index)) != it.Commit) {
				continue
			}
			it.Output = capBytes(it.Output, maxOutputBytes)
			prior[priorKey(it.Step, it.Item)] = it
		case "run_end":
			e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
			ended = engine.DecodeDetails[Details](e.Details).Status
			if ended == "" {
				ended = "ended"
			}
		}
	}
	switch {
	case !isWF:
		return "", nil, engine.BadInputf("--resume: run %s is not a workflow run", id)
	case ended != "" && ended != StatusInterrupted:
		return "", nil, engine.Refusalf("--resume: run %s ended (%s): nothing to resume; start the workflow again with locum run %s", id, untrusted.Escape(ended), untrusted.Escape(name))
	case name == "" || base == "":
		return "", nil, engine.BadInputf("--resume: the journal of run %s does not name its workflow and base commit", id)
	case !sealed && def == "":
		return "", nil, engine.Refusalf("--resume: the journal of run %s does not carry this operator's seal over its workflow, parameters and base as this locum seals them: it names no fingerprint of the workflow's definition, as a run an earlier locum interrupted does, or it is not a run locum made here; start the workflow again with locum run %s", id, untrusted.Escape(name))
	case !sealed:
		return "", nil, engine.Refusalf("--resume: the journal of run %s does not carry this operator's seal over its workflow, parameters and base: it is not a run locum made here, or it was changed since; start the workflow again with locum run %s", id, untrusted.Escape(name))
	}
	wf, _, ok := c.Workflow(name)
	if !ok {
		return "", nil, engine.BadInputf("--resume: run %s ran workflow %q, which no composed pack declares now", id, untrusted.Escape(name))
	}
	if now, err := definition(wf); err != nil || now != def {
		return "", nil, engine.Refusalf("--resume: workflow %s changed since run %s began (its steps, parameters or verify are not the ones the run was sealed with), and its green items were made and judged under the old definition; start the workflow anew with locum run %s", untrusted.Escape(name), id, untrusted.Escape(name))
	}
	w.base = base
	w.prior, w.resumedOf = prior, id
	// A run killed outright left its worktrees and its branch; both are locum's, made again.
	if err := w.g.RemoveRun(ctx, id); err != nil {
		return "", nil, fmt.Errorf("removing the worktrees run %s left: %w", id, err)
	}
	if err := gitsafe.DeleteBranch(ctx, w.place.Root, Branch(id)); err != nil {
		return "", nil, err
	}
	return name, params, nil
}

// carry makes every green item of the run resumed this run's before any item starts: its commit
// gets a ref of this run and its record a sealed item_carried line of this journal, and the old
// run's refs go. A stop of this run at any point then loses none of them to a resume of it, and
// no ref outlives a chain of resumes.
func (w *run) carry(ctx context.Context) error {
	keys := slices.Sorted(maps.Keys(w.prior))
	for _, k := range keys {
		it := w.prior[k]
		if it.Commit != "" {
			if _, err := w.g.locked(ctx, w.place.Root, "update-ref", itemRef(w.r.ID, it.Step, it.Index), it.Commit); err != nil {
				return err
			}
		}
		w.r.Emit(engine.ItemCarriedEvent(w.itemEvent(it)))
	}
	return w.g.deleteItemRefs(ctx, w.resumedOf)
}

// keepPrior gives a reused item's commit a ref of this run, so a resume of this run finds it too.
func (w *run) keepPrior(ctx context.Context, it ItemResult) error {
	if it.Commit == "" {
		return nil
	}
	_, err := w.g.locked(ctx, w.place.Root, "update-ref", itemRef(w.r.ID, it.Step, it.Index), it.Commit)
	return err
}
