package engine

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// FieldSeal authenticates what a run journals for a later run to read back and act on (what a
// workflow's or a bench's resume takes): an HMAC-SHA256, under the operator's key, of the fields
// as one JSON array after Version. The journal is the repository's file, which anyone who wrote
// the repository could have written too; the key is the operator's, so a reader takes only what
// a run of this operator recorded. Version names the fields' layout, so a seal of another layout
// never verifies.
type FieldSeal struct {
	Key     []byte
	Version string
}

// MAC is the seal of fields; "" with no key.
func (s FieldSeal) MAC(fields ...any) string {
	if len(s.Key) == 0 {
		return ""
	}
	// A JSON array is an unambiguous encoding of the fields (a map's keys are sorted).
	data, err := json.Marshal(append([]any{s.Version}, fields...))
	if err != nil {
		return ""
	}
	m := hmac.New(sha256.New, s.Key)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// OK says got is the seal of fields under the key.
func (s FieldSeal) OK(got string, fields ...any) bool {
	want := s.MAC(fields...)
	return want != "" && hmac.Equal([]byte(got), []byte(want))
}
