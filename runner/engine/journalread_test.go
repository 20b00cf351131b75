package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A line over the ceiling is passed over, not fatal.
func TestLongLines(t *testing.T) {
	dir := t.TempDir()
	id := "20261130T100000Z-aaaaaa"
	path := filepath.Join(dir, id+".jsonl")
	j, err := OpenJournal(path, id)
	require.NoError(t, err)
	j.Event("run_start", map[string]any{"mode": "transform"})
	j.Event("big", map[string]any{"text": strings.Repeat("x", 200<<10)})
	j.Event("huge", map[string]any{"text": strings.Repeat("y", maxLine)})
	j.Event("run_end", map[string]any{"status": "OK"})
	require.NoError(t, j.Close())
	rj, err := LoadJournal(path, nil)
	require.NoError(t, err)
	var names []string
	for _, ev := range rj.Events {
		names = append(names, str(ev["event"]))
	}
	assert.Equal(t, []string{"run_start", "big", "run_end"}, names)
}

// A reader keeps at most MaxEvents events, and about maxEventMemory of them decoded, and says
// the journal was cut.
func TestLoadJournalCapsEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "20261130T100000Z-aaaaaa.jsonl")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(`{"event":"x"}`+"\n"), MaxEvents+10), 0o644))
	j, err := LoadJournal(path, nil)
	require.NoError(t, err)
	assert.Len(t, j.Events, MaxEvents)
	assert.Contains(t, j.Cut, "more events than")

	// Events of many members are fewer for what they cost decoded.
	var line strings.Builder
	line.WriteString(`{"event":"x"`)
	for i := range 200 {
		fmt.Fprintf(&line, `,"k%d":%d`, i, i)
	}
	line.WriteString("}\n")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(line.String()), 10000), 0o644))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	j, err = LoadJournal(path, nil)
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	assert.Less(t, len(j.Events), 2000)
	assert.Contains(t, j.Cut, "more events than")
	assert.Less(t, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc), uint64(3*maxEventMemory/2), "what is kept costs about what the reader allows")
	runtime.KeepAlive(j)
}

// emptyLines is a journal a repository could bring: 16 MiB of "{}" lines.
func emptyLines(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl"), bytes.Repeat([]byte("{}\n"), (16<<20)/3), 0o644))
	return dir
}

// Reading a journal costs memory bounded by what the reader keeps, not by the journal's lines:
// runs list, show and analyze over 16 MiB of "{}" lines allocate a few megabytes (before the
// bound: 6.1 GB in 44.7 million allocations and 24 s for runs list alone).
func TestReadingIsBoundedInMemory(t *testing.T) {
	dir := emptyLines(t)
	path := filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl")
	for name, read := range map[string]func(){
		"list": func() {
			runs, err := ListRuns(dir)
			require.NoError(t, err)
			require.Len(t, runs, 1)
		},
		"show": func() {
			j, err := LoadJournal(path, nil)
			require.NoError(t, err)
			require.Empty(t, j.Events)
		},
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			start := time.Now()
			read()
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			alloc, mallocs := after.TotalAlloc-before.TotalAlloc, after.Mallocs-before.Mallocs
			t.Logf("%s: %.2f MB allocated in %d allocations, %v", name, float64(alloc)/(1<<20), mallocs, elapsed)
			assert.Less(t, alloc, uint64(4<<20))
			assert.Less(t, mallocs, uint64(1000))
		})
	}
}

// BenchmarkListEmptyLines is runs list over one journal of 16 MiB of "{}" lines.
func BenchmarkListEmptyLines(b *testing.B) {
	dir := emptyLines(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ListRuns(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzScanJournal reads journals of any shape through buffers of any size: every line reaches
// the reader whole and in order.
func FuzzScanJournal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "analyze", "testdata", "journals", "*.jsonl"))
	for _, name := range files[:min(len(files), 4)] {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, uint8(0))
		}
	}
	f.Add([]byte("{}\n{}\n"), uint8(3))
	f.Add([]byte("no newline at the end"), uint8(200))
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		var got []byte
		_, err := scanSize(bytes.NewReader(data), func(line []byte) {
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("a line with a newline: %q", line)
			}
			got = append(append(got, line...), '\n')
		}, 16+int(size))
		require.NoError(t, err)
		var want []byte
		for _, line := range bytes.SplitAfter(data, []byte{'\n'}) {
			if len(line) > 0 {
				want = append(append(want, bytes.TrimSuffix(line, []byte{'\n'})...), '\n')
			}
		}
		require.Equal(t, string(want), string(got))
	})
}
