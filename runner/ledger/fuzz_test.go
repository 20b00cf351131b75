package ledger

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/untrusted"
)

// FuzzFromEvents feeds journals of any shape to the reader: it never panics, and what it derives
// is never negative where it is a count.
func FuzzFromEvents(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "runs", "*.jsonl"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"event":"run_start"}` + "\n" + `{"event":"run_end","host":{"parts":{"read_bytes":1e308}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var events []map[string]any
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var ev map[string]any
			if untrusted.Unmarshal(sc.Bytes(), &ev) == nil {
				events = append(events, ev)
			}
		}
		e, _ := FromEvents("fuzz", events)
		p := e.Parts
		if p.Read < 0 || p.Write < 0 || p.Call < 0 || p.Result < 0 || p.Review < 0 || e.TurnsLeft < 0 || e.LocalMs < 0 || e.SpanLines < 0 {
			t.Fatalf("a negative count from a journal: %+v", e)
		}
		_ = e.Estimate(cost.Defaults())
		for _, ev := range events {
			if h, ok := ev["host"].(map[string]any); ok {
				_, _ = Recorded(h)
			}
		}
	})
}
