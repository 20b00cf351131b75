package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// The nearest rank: the smallest value at or above the quantile of them.
func TestRank(t *testing.T) {
	for _, tc := range []struct {
		xs   []int64
		p    float64
		want int64
	}{
		{[]int64{5}, 0.5, 5},
		{[]int64{5}, 0.9, 5},
		{[]int64{4, 1, 3, 2}, 0.5, 2},
		{[]int64{4, 1, 3, 2}, 0.9, 4},
		{[]int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 0.9, 90},
		{[]int64{10, 20, 30, 40, 50, 60, 70, 80, 90, 100}, 0.5, 50},
	} {
		if got := rank(tc.xs, tc.p); got == nil || *got != tc.want {
			t.Errorf("rank(%v, %v) = %v, want %d", tc.xs, tc.p, got, tc.want)
		}
	}
	if got := rank([]int64(nil), 0.5); got != nil {
		t.Errorf("rank of none = %d, want nil", *got)
	}
}

// A row counts each outcome of the model's cells, the oracle's words, the servers' figures where
// they gave them, and the weights as each server named them.
func TestRows(t *testing.T) {
	yes, no := true, false
	ms := func(n int64) *int64 { return &n }
	rate := func(r float64) *float64 { return &r }
	models := []engine.BenchModel{{Model: "a", Weights: "a.gguf"}, {Model: "b", Weights: "b.gguf"}, {Model: "c", Weights: "c.gguf"}}
	cells := []engine.BenchCell{
		{Task: "1", Model: "a", RunID: "r", Status: "OK", Shown: engine.ShownFixed, Right: &yes, WallMs: 100, TTFTms: ms(10), Rate: rate(50), InTokens: ms(100), OutTokens: ms(20), Saved: &cost.Summary{Method: "estimated", Net: 100, USD: 0.5}, Weights: "a.gguf"},
		{Task: "2", Model: "a", RunID: "r", Status: "OK", Shown: engine.ShownHeld, Right: &no, WallMs: 300, TTFTms: ms(30), Rate: rate(40), InTokens: ms(100), OutTokens: ms(20), Saved: &cost.Summary{Method: "estimated", Net: -50, USD: -0.25}, Weights: "a.gguf"},
		{Task: "3", Model: "a", RunID: "r", Status: "RED", WallMs: 200, Weights: "a-other.gguf"},
		{Task: "1", Model: "b", RunID: "r", Status: "REFUSED", Kind: "model_not_listed", WallMs: 5, Weights: "b.gguf"},
		{Task: "2", Model: "b", Status: "ERROR", Kind: "no_server"},
	}
	rows := Rows(models, cells)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want one per model", len(rows))
	}
	a, b, c := rows[0], rows[1], rows[2]
	if a.Cells != 3 || a.Kept != 2 || a.Fixed != 1 || a.Held != 1 || a.Red != 1 || a.Right != 1 || a.Judged != 2 {
		t.Errorf("a's counts: %+v", a)
	}
	if *a.WallP50Ms != 200 || *a.WallP90Ms != 300 || *a.TTFTms != 10 || *a.Rate != 40 || *a.InTokens != 200 || *a.OutTokens != 40 {
		t.Errorf("a's figures: wall %d/%d ttft %d rate %v tokens %d/%d", *a.WallP50Ms, *a.WallP90Ms, *a.TTFTms, *a.Rate, *a.InTokens, *a.OutTokens)
	}
	if a.Saved == nil || a.Saved.Net != 50 || a.Saved.USD != 0.25 {
		t.Errorf("a saved %+v, want the sum", a.Saved)
	}
	if a.Weights != "a.gguf"+WeightsSeparator+"a-other.gguf" {
		t.Errorf("a's weights %q: want each description once", a.Weights)
	}
	if b.Cells != 2 || b.Refused != 1 || b.Errors != 1 || b.Kept != 0 || b.Judged != 0 {
		t.Errorf("b's counts: %+v", b)
	}
	if *b.WallP50Ms != 5 || b.TTFTms != nil || b.Rate != nil || b.InTokens != nil || b.Saved != nil {
		t.Errorf("b's figures: a cell whose run never began has no wall time, and no server reported the others: %+v", b)
	}
	if c.Cells != 0 || c.WallP50Ms != nil || c.Weights != "c.gguf" {
		t.Errorf("c ran nothing, named as the pool lists it: %+v", c)
	}
}

// The table escapes what a server named, and as Markdown a pipe in it stays in its cell.
func TestWriteTable(t *testing.T) {
	rows := Rows([]engine.BenchModel{{Model: "evil|\x1b[31mred", Weights: "w|x"}}, nil)
	for _, markdown := range []bool{false, true} {
		var out bytes.Buffer
		if err := WriteTable(&out, rows, markdown); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if strings.Contains(text, "\x1b") {
			t.Errorf("a control character reached the table: %q", text)
		}
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if markdown {
			if len(lines) != 3 || !strings.HasPrefix(lines[1], "| --- |") {
				t.Fatalf("not a Markdown table: %q", text)
			}
			if n := strings.Count(lines[2], " | "); n != strings.Count(lines[0], " | ") {
				t.Errorf("a pipe of the model's name split its row: %q", lines[2])
			}
		} else if len(lines) != 2 || !strings.HasPrefix(lines[0], "MODEL") {
			t.Fatalf("not a table: %q", text)
		}
	}
}
