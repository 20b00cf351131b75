package evals

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzGrade feeds every task's predicate arbitrary answers, as a model writes them and as a
// planted record's outputs reach them under eval --verify: a predicate never panics, and a verdict
// that passes carries no FAIL evidence.
func FuzzGrade(f *testing.F) {
	for _, task := range Tasks() {
		f.Add(task.Fixture)
		if good, err := os.ReadFile(filepath.Join("testdata", "good", task.ID+".md")); err == nil {
			f.Add(string(good))
		}
	}
	f.Add("-- shapes/area.go --\npackage shapes\nfunc Area(w, h, scale int) int\n-- shapes/report.go --\npackage shapes\n")
	f.Add("```go\nfunc Load(path string) (*Store, error)\n```\n")
	f.Fuzz(func(t *testing.T, answer string) {
		for _, task := range Tasks() {
			g := task.Grade(answer)
			for _, e := range g.Evidence {
				if g.Passed && len(e) >= 4 && e[:4] == "FAIL" {
					t.Fatalf("task %s passed with evidence %q", task.ID, e)
				}
			}
		}
	})
}

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

// FuzzReadHostResult feeds the reader of a host's output arbitrary text, as a host command, or
// anything it runs, may print it: it never panics; usage it returns is within its bounds and
// survives the record's JSON unchanged; a note is short; output it reads as plain text is the
// answer unchanged.
func FuzzReadHostResult(f *testing.F) {
	f.Add(claudeResult("an answer", 3, 12, 2345, 45000, 800, "0.0421"))
	f.Add(`{"type":"system"}` + "\n" + claudeResult("x", 1, 1, 0, 0, 1, "1e-3") + "\n")
	f.Add(`{"type":"result","result":"r","num_turns":1,"total_cost_usd":0.1,"usage":{"input_tokens":1,"output_tokens":1},"usage":{}}`)
	f.Add(`{"type":"result","result":"r","num_turns":-1,"total_cost_usd":1e400,"usage":{"input_tokens":1.5,"output_tokens":null}}`)
	f.Add("func F() {\n}\n")
	f.Add("no\n")
	f.Fuzz(func(t *testing.T, output string) {
		r := ReadHostResult(output)
		if len(r.Note) > maxUsageNote {
			t.Fatalf("a note of %d bytes", len(r.Note))
		}
		if r.Usage == nil && r.Note == "" && r.Answer != output {
			t.Fatalf("plain output changed: %q to %q", output, r.Answer)
		}
		if r.Usage == nil {
			return
		}
		if why := r.Usage.check(); why != "" {
			t.Fatalf("usage out of bounds: %s", why)
		}
		data, err := json.Marshal(r.Usage)
		if err != nil {
			t.Fatal(err)
		}
		var back HostUsage
		if err := json.Unmarshal(data, &back); err != nil || back != *r.Usage {
			t.Fatalf("usage %+v does not survive JSON: %s (%v)", *r.Usage, data, err)
		}
	})
}
