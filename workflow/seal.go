package workflow

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// seal authenticates what a run journals for its resume to read back: the workflow, parameters
// and base it ran with, and each green item's commit, outcome, output and the fingerprint of its inputs. The journal and the
// item refs are the repository's files, which anyone who wrote the repository could have
// written too; the key is the operator's (the user state directory's), so a resume takes only
// what a run of this operator recorded, and runs again any item whose seal does not hold.
type seal struct{ key []byte }

// sealVersion names what a seal covers, so a seal of another layout never verifies.
const sealVersion = "locum workflow resume 1"

func (s seal) mac(fields ...any) string {
	if len(s.key) == 0 {
		return ""
	}
	// A JSON array is an unambiguous encoding of the fields (a map's keys are sorted).
	data, err := json.Marshal(append([]any{sealVersion}, fields...))
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, s.key)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

func (s seal) ok(got string, fields ...any) bool {
	want := s.mac(fields...)
	return want != "" && hmac.Equal([]byte(got), []byte(want))
}

func (s seal) runFields(runID, name, base string, params map[string]string) []any {
	return []any{"workflow", runID, name, base, params}
}

func (s seal) itemFields(runID string, it ItemResult) []any {
	return []any{"item", runID, it.Step, it.Index, it.Item, it.Commit, it.Outcome, it.Output, it.Inputs}
}

// run is the seal of a run's workflow event.
func (s seal) run(runID, name, base string, params map[string]string) string {
	return s.mac(s.runFields(runID, name, base, params)...)
}

// item is the seal of a green item's end; a red item has none, since a resume runs it again.
func (s seal) item(runID string, it ItemResult) string {
	if !it.Green() {
		return ""
	}
	return s.mac(s.itemFields(runID, it)...)
}
