package hostusage

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzTranscript feeds transcripts of any shape to the reader and the join: they never panic,
// no figure is negative, and the shares of a request never sum to more than the request.
func FuzzTranscript(f *testing.F) {
	_ = filepath.WalkDir(filepath.Join("testdata", "claude"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil {
				f.Add(data)
			}
		}
		return nil
	})
	f.Add(jsonl(
		asst("a1", "", 1, "msg_1", u(2, 100, 40000, 50), bash("toolu_1", "locum transform"), mcp("toolu_2", "run", nil)),
		res("u1", "a1", 20, result("toolu_2", []map[string]any{text("run=20261205T100002Z-00000a")}), result("toolu_1", "run=20261205T100002Z-00000a")),
		asst("a2", "u1", 22, "msg_2", u(3, 200, 40100, 60), text("read")),
	))
	f.Add([]byte(`{"type":"assistant","timestamp":"2026-12-05T10:00:00Z","message":{"id":"m","usage":{"input_tokens":4294967296,"output_tokens":0},"content":[{"type":"tool_use","id":"t","name":"mcp__locum__x","input":{}}]}}` + "\n" +
		`{"type":"user","uuid":"u","timestamp":"2026-12-05T10:00:09Z","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"run=20261205T100001Z-000000"}]}}` + "\n" +
		`{"type":"assistant","parentUuid":"u","timestamp":"2026-12-05T10:00:10Z","message":{"id":"m","usage":{"output_tokens":7},"content":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := DefaultLimits()
		lim.LineBytes, lim.Requests = 4096, 64
		r := newReader(lim)
		if err := r.lines(0, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		tr := r.finish()
		var runs []Run
		for _, c := range tr.Calls {
			if c.Call.Input < 0 || c.Call.CacheCreation < 0 || c.Call.CacheRead < 0 || c.Call.Output < 0 || c.Context < 0 || c.Read.Output < 0 {
				t.Fatalf("a negative figure: %+v", c)
			}
			for _, id := range c.RunIDs {
				runs = append(runs, Run{ID: id, Start: c.At, End: c.ResultAt})
			}
		}
		total := map[string]Usage{}
		for _, j := range tr.Join(runs, Tolerance) {
			if j.Call.Tokens() < 0 || j.Read.Tokens() < 0 {
				t.Fatalf("a negative share: %+v", j)
			}
			total[j.ToolUseID] = total[j.ToolUseID].Add(j.Call)
		}
		for _, c := range tr.Calls {
			if got := total[c.ToolUseID]; got.Tokens() > c.Call.Tokens() {
				t.Fatalf("shares of %s sum to %+v, more than its request's %+v", c.ToolUseID, got, c.Call)
			}
		}
		if tr.Left.Total() < 0 || tr.Files < 0 {
			t.Fatal("a negative count")
		}
	})
}
