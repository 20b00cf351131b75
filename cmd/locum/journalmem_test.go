package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
)

// longLineRun is the run whose journal longLineRepo writes.
const longLineRun = "20261130T100000Z-aaaaaa"

// longLineRepo is a repository whose journals folder holds copies journals of the attack's
// shape: a run_start, then one run_end of size bytes holding "{}" elements, the shape that costs
// a map the most for its bytes. The environment is a fresh operator's, and the working directory
// the repository.
func longLineRepo(tb testing.TB, size, copies int) {
	tb.Helper()
	root := tb.TempDir()
	gittest.Init(tb, root)
	home := tb.TempDir()
	tb.Setenv("HOME", home)
	tb.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	tb.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	tb.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	tb.Setenv("LOCUM_BASE_URL", "http://127.0.0.1:9/v1") // nothing answers: status says so at once
	tb.Chdir(root)
	runs := filepath.Join(root, ".git", "locum", "runs")
	require.NoError(tb, os.MkdirAll(runs, 0o755))
	var journal bytes.Buffer
	journal.WriteString(`{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z"}` + "\n")
	journal.WriteString(`{"event":"run_end","status":"OK","x":[{}`)
	journal.WriteString(strings.Repeat(",{}", (size-journal.Len()-64)/3))
	journal.WriteString("]}\n")
	for i := range copies {
		id := longLineRun
		if i > 0 {
			id = fmt.Sprintf("20261130T10000%dZ-aaaaaa", i)
		}
		require.NoError(tb, os.WriteFile(filepath.Join(runs, id+".jsonl"), journal.Bytes(), 0o644))
	}
}

// journalCommands are the commands that read a folder of journals, or one.
var journalCommands = [][]string{{"runs", "list"}, {"runs", "show", longLineRun}, {"ledger"}, {"status"}}

// allocated runs locum with args in-process and returns the bytes it allocated, with its output.
func allocated(args []string) (uint64, string) {
	var stdout, stderr bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC() // twice: a line's buffer pooled by an earlier read is gone
	runtime.ReadMemStats(&before)
	run(context.Background(), append([]string{"locum"}, args...), strings.NewReader(""), &stdout, &stderr)
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc, stdout.String() + stderr.String()
}

// A repository's journal of one long line costs each command that reads journals about the line
// (its buffer, which grows to twice the line's length over its read), whatever the line holds.
// The journal has the attack's shape at 1 MiB, which -race reads in seconds;
// BenchmarkJournalOfALongLine reads it at the cap. Decoded whole, 1 MiB of it costs runs list,
// the ledger and status 51 MB allocated each and runs show 58 MB, and three copies three times
// that.
func TestJournalOfALongLineIsBoundedInMemory(t *testing.T) {
	const size = 1 << 20
	for _, copies := range []int{1, 3} {
		t.Run(fmt.Sprint(copies), func(t *testing.T) {
			longLineRepo(t, size, copies)
			for _, args := range journalCommands {
				alloc, out := allocated(args)
				t.Logf("%d journal(s), locum %s: %.1f MB allocated", copies, strings.Join(args, " "), float64(alloc)/(1<<20))
				// A journal's buffer is reused for the next (by a sync.Pool, which -race
				// empties at random), and freed with it.
				assert.Less(t, alloc, uint64(copies*2*size+8<<20), "locum %s over %d journal(s): %s", strings.Join(args, " "), copies, out)
				if strings.Join(args, " ") == "runs list" {
					assert.Contains(t, out, "OK", "the status of the long run_end is read")
				}
			}
		})
	}
}

// BenchmarkJournalOfALongLine is each command that reads journals over the attack's journal: one
// run_end of "{}" to just under the 16 MiB line cap. B/op is what the command allocated; decoded
// whole, the journal costs runs list 914 MB, runs show 95 MB, the ledger and status 898 MB.
func BenchmarkJournalOfALongLine(b *testing.B) {
	longLineRepo(b, 16<<20, 1)
	for _, args := range journalCommands {
		b.Run(strings.Join(args, " "), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, _ = allocated(args)
			}
		})
	}
}
