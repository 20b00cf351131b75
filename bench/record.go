package bench

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Record is a bench that ended, as its journal has it.
type Record struct {
	RunID   string
	Details Details
}

// Row is the model's row of the bench; false where the bench ran no such model.
func (rec *Record) Row(model string) (Row, bool) {
	for _, r := range rec.Details.Rows {
		if r.Model == model {
			return r, true
		}
	}
	return Row{}, false
}

// ReadRecord reads the bench run id (or a unique prefix of it) from the journals of the repository
// at root. Its figures decide what an acceptance records, so only a journal whose seal holds under
// the operator's key is read: a repository can bring journals of its own. The bench must have run
// every cell.
func ReadRecord(root, id string, key []byte) (*Record, error) {
	dir, err := engine.RunsDir(root)
	if err != nil {
		return nil, err
	}
	j, err := engine.LoadRun(dir, id, key)
	if err != nil {
		return nil, engine.BadInputf("bench %s: %v", untrusted.Escape(id), err)
	}
	runID := strings.TrimSuffix(filepath.Base(j.Path), ".jsonl")
	if key == nil || !j.Sealed || j.Run != runID {
		return nil, engine.Refusalf("bench %s: its journal does not carry this operator's seal (%s)", runID, engine.Unsealed)
	}
	rec := &Record{RunID: runID}
	isBench, ended := false, false
	for _, ev := range j.Events {
		switch engine.EventKind(ev) {
		case "run_start":
			e, _ := engine.DecodeEvent[engine.RunStartEvent](ev)
			isBench = e.Mode == Mode.Name
		case "run_end":
			e, _ := engine.DecodeEvent[engine.RunEndEvent](ev)
			rec.Details, ended = engine.DecodeDetails[Details](e.Details), true
		}
	}
	switch {
	case !isBench:
		return nil, engine.BadInputf("run %s is not a bench run", runID)
	case !ended || rec.Details.Status != StatusCompleted:
		return nil, engine.Refusalf("bench %s did not run every cell (status %s): locum bench --resume %s finishes it", runID, untrusted.Escape(fmt.Sprint(cmpOr(rec.Details.Status, "none"))), runID)
	}
	return rec, nil
}
