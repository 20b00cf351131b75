package workflow

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// seal authenticates what a run journals for its resume to read back: the workflow, the
// fingerprint of its definition, the parameters and base it ran with, and each green item's
// commit, outcome, output and the fingerprint of its inputs. The journal and the item refs are
// the repository's files, which anyone who wrote the repository could have written too; the key
// is the operator's (the user state directory's), so a resume takes only what a run of this
// operator recorded, and runs again any item whose seal does not hold.
type seal struct{ engine.FieldSeal }

// sealVersion names what a seal covers, so a seal of another layout never verifies: a run an
// earlier layout sealed cannot be resumed, and is run anew.
const sealVersion = "locum workflow resume 2"

func newSeal(key []byte) seal { return seal{engine.FieldSeal{Key: key, Version: sealVersion}} }

func (s seal) mac(fields ...any) string { return s.MAC(fields...) }

func (s seal) ok(got string, fields ...any) bool { return s.OK(got, fields...) }

func (s seal) runFields(runID, name, definition, base string, params map[string]string) []any {
	return []any{"workflow", runID, name, definition, base, params}
}

func (s seal) itemFields(runID string, it ItemResult) []any {
	return []any{"item", runID, it.Step, it.Index, it.Item, it.Commit, it.Outcome, it.Output, it.Inputs}
}

// run is the seal of a run's workflow event.
func (s seal) run(runID, name, definition, base string, params map[string]string) string {
	return s.mac(s.runFields(runID, name, definition, base, params)...)
}

// definition is the fingerprint of a workflow as its pack declares it: its parameters (with
// their defaults), steps (modes, lists, inputs, verifies) and final verify, as JSON (a struct's
// fields in their order, a map's keys sorted) hashed. A resume goes on only under the definition
// its run was sealed with: its green items were made and judged by that one, and a pack changed
// since would run new commands over them.
func definition(wf packs.Workflow) (string, error) {
	data, err := json.Marshal(wf)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// item is the seal of a green item's end; a red item has none, since a resume runs it again.
func (s seal) item(runID string, it ItemResult) string {
	if !it.Green() {
		return ""
	}
	return s.mac(s.itemFields(runID, it)...)
}
