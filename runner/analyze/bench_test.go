package analyze

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
)

// journalDir writes n copies of a journal a real transform wrote (a red attempt, then a kept one).
func journalDir(b *testing.B, n int) string {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "journals", "transform-verify-red-recovered.jsonl"))
	require.NoError(b, err)
	dir := b.TempDir()
	for i := range n {
		require.NoError(b, os.WriteFile(filepath.Join(dir, fmt.Sprintf("20261130T%06dZ-%06x.jsonl", i, i)), data, 0o644))
	}
	return dir
}

// BenchmarkAnalyzeAll is `runs analyze --all` over 1,000 journals; BenchmarkListRuns is
// `runs list` over the same folder, which reads and decodes the same bytes: the ratio is what
// the analysis adds to reading.
func BenchmarkAnalyzeAll(b *testing.B) {
	dir := journalDir(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		runs, _, err := Dir(dir, nil, Filter{})
		if err != nil || len(runs) != 1000 {
			b.Fatal(err, len(runs))
		}
		Summarize(runs)
	}
}

func BenchmarkListRuns(b *testing.B) {
	dir := journalDir(b, 1000)
	b.ResetTimer()
	for b.Loop() {
		runs, err := engine.ListRuns(dir, nil)
		if err != nil || len(runs) != 1000 {
			b.Fatal(err, len(runs))
		}
	}
}
