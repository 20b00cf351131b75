package evals

import (
	"encoding/json"
	"testing"
)

// FuzzParseJournal feeds the capture journal parser arbitrary bytes, as a crash, a disk error or a
// planted file could leave them: it never panics, what it keeps ends at a line boundary, and what
// it keeps and cuts together are the whole file.
func FuzzParseJournal(f *testing.F) {
	cond := Conditions{Seed: 42, K: 5}
	f.Add(journalBytesFuzz(cond))
	f.Add(append(journalBytesFuzz(cond), []byte(`{"kind":"turn","turn":{"arm":"L","task":"code","run":1}}`+"\n"+`{"kind":"tu`)...))
	f.Add([]byte("{\"kind\":\"conditions\"}\n{\"kind\":\"host\",\"host_version\":\"1\"}\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _, keep, torn, err := parseJournal("j.jsonl", data, cond)
		if err != nil {
			return
		}
		if keep+torn != int64(len(data)) && keep+torn != 0 {
			t.Fatalf("kept %d and cut %d of %d bytes", keep, torn, len(data))
		}
		if keep > 0 && data[keep-1] != '\n' {
			t.Fatalf("kept %d bytes, not ending a line", keep)
		}
	})
}

func journalBytesFuzz(cond Conditions) []byte {
	data, _ := json.Marshal(journalLine{Kind: "conditions", Conditions: &cond})
	return append(data, '\n')
}
