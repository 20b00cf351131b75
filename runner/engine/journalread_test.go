package engine

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var testKey = bytes.Repeat([]byte{7}, 32)

// sealedJournal writes a run's journal as Execute does: sealed under key when it closes.
func sealedJournal(t *testing.T, dir, id string, key []byte) string {
	t.Helper()
	path := filepath.Join(dir, id+".jsonl")
	j, err := OpenJournal(path, id)
	require.NoError(t, err)
	j.Seal(key)
	j.event("run_start", map[string]any{"mode": "transform", "model": "m"})
	j.event("reply", map[string]any{"answer": "x"})
	j.event("run_end", map[string]any{"status": "OK", "receipt": "OK mode=transform"})
	require.NoError(t, j.Close())
	return path
}

func sealOf(t *testing.T, path string, key []byte) Seal {
	t.Helper()
	j, err := LoadJournal(path, key, nil)
	require.NoError(t, err)
	return j.Seal
}

func TestJournalSeal(t *testing.T) {
	dir := t.TempDir()
	id := "20261130T100000Z-aaaaaa"
	path := sealedJournal(t, dir, id, testKey)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 4)
	assert.True(t, strings.HasPrefix(lines[3], `{"event":"seal","mac":"`), lines[3])

	j, err := LoadJournal(path, testKey, nil)
	require.NoError(t, err)
	assert.Equal(t, Seal{Sealed: true, Run: id}, j.Seal)
	assert.Len(t, j.Events, 3, "the seal line is not an event")

	other := bytes.Repeat([]byte{8}, 32)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	appended := filepath.Join(t.TempDir(), id+".jsonl")
	require.NoError(t, os.WriteFile(appended, append(bytes.Clone(data), []byte(`{"event":"verdict","verdict":"rejected"}`+"\n")...), 0o644))
	for name, tc := range map[string]struct {
		path string
		key  []byte
	}{
		"another operator's key": {path, other},
		"no key":                 {path, nil},
		"a figure edited":        {write("20261130T100000Z-bbbbbb.jsonl", []byte(strings.Replace(string(data), `"OK"`, `"RED"`, 1))), testKey},
		// The same bytes under another name: a copy, which a ledger would count twice.
		"copied under another name":      {write("20261130T100000Z-cccccc.jsonl", data), testKey},
		"a line appended after the seal": {appended, testKey},
		"a line removed":                 {write("20261130T100000Z-dddddd.jsonl", []byte(lines[0]+"\n"+lines[2]+"\n"+lines[3]+"\n")), testKey},
		"the seal alone":                 {write("20261130T100000Z-eeeeee.jsonl", []byte(lines[3]+"\n")), testKey},
		"empty":                          {write("20261130T100000Z-ffffff.jsonl", nil), testKey},
	} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, sealOf(t, tc.path, tc.key).Sealed)
		})
	}
}

// A later event (a person's verdict) keeps a sealed journal sealed; on an unsealed one it
// seals nothing.
func TestAppendEventKeepsTheSeal(t *testing.T) {
	dir := t.TempDir()
	id := "20261130T100000Z-aaaaaa"
	path := sealedJournal(t, dir, id, testKey)
	require.NoError(t, AppendEvent(path, id, VerdictEvent{Verdict: "accepted"}, testKey))
	j, err := LoadJournal(path, testKey, nil)
	require.NoError(t, err)
	assert.True(t, j.Sealed)
	assert.Equal(t, "verdict", j.Events[len(j.Events)-1]["event"])

	plain := filepath.Join(dir, "20261130T110000Z-bbbbbb.jsonl")
	require.NoError(t, os.WriteFile(plain, []byte(`{"event":"run_start","mode":"transform"}`+"\n"), 0o644))
	require.NoError(t, AppendEvent(plain, "20261130T110000Z-bbbbbb", VerdictEvent{Verdict: "accepted"}, testKey))
	assert.False(t, sealOf(t, plain, testKey).Sealed)

	// A link named like a journal is not followed.
	target := filepath.Join(t.TempDir(), "target")
	require.NoError(t, os.WriteFile(target, nil, 0o644))
	link := filepath.Join(dir, "20261130T120000Z-cccccc.jsonl")
	require.NoError(t, os.Symlink(target, link))
	require.Error(t, AppendEvent(link, "20261130T120000Z-cccccc", VerdictEvent{}, testKey))
	data, _ := os.ReadFile(target)
	assert.Empty(t, data)
}

// A journal that held bytes before the run opened it is not sealed: the seal would vouch for
// bytes the run did not write.
func TestSealRefusesAFileWithBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "20261130T100000Z-aaaaaa.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(`{"event":"run_end","status":"OK"}`+"\n"), 0o644))
	j, err := OpenJournal(path, "20261130T100000Z-aaaaaa")
	require.NoError(t, err)
	j.Seal(testKey)
	j.event("run_start", map[string]any{"mode": "transform"})
	require.NoError(t, j.Close())
	assert.False(t, sealOf(t, path, testKey).Sealed)
}

// Execute seals the journal with the key RunSpec names, and warns where there is none to be had.
func TestExecuteSealsTheJournal(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	res := Execute(t.Context(), RunSpec{Mode: "m", JournalPath: path, JournalKey: func() ([]byte, error) { return testKey, nil }}, nil)
	j, err := LoadJournal(path, testKey, nil)
	require.NoError(t, err)
	assert.Equal(t, Seal{Sealed: true, Run: res.RunID}, j.Seal)

	var stderr bytes.Buffer
	path = filepath.Join(dir, "run2.jsonl")
	Execute(t.Context(), RunSpec{Mode: "m", JournalPath: path, Stderr: &stderr, JournalKey: func() ([]byte, error) { return nil, os.ErrPermission }}, nil)
	assert.Contains(t, stderr.String(), "the run journal is not sealed")
	assert.False(t, sealOf(t, path, testKey).Sealed)
}

// A line over the ceiling is passed over, not fatal, and the seal still covers it.
func TestLongLines(t *testing.T) {
	dir := t.TempDir()
	id := "20261130T100000Z-aaaaaa"
	path := filepath.Join(dir, id+".jsonl")
	j, err := OpenJournal(path, id)
	require.NoError(t, err)
	j.Seal(testKey)
	j.event("run_start", map[string]any{"mode": "transform"})
	j.event("big", map[string]any{"text": strings.Repeat("x", 200<<10)})
	j.event("huge", map[string]any{"text": strings.Repeat("y", maxLine)})
	j.event("run_end", map[string]any{"status": "OK"})
	require.NoError(t, j.Close())
	rj, err := LoadJournal(path, testKey, nil)
	require.NoError(t, err)
	assert.True(t, rj.Sealed)
	var names []string
	for _, ev := range rj.Events {
		names = append(names, str(ev["event"]))
	}
	assert.Equal(t, []string{"run_start", "big", "run_end"}, names)
}

// A reader keeps at most MaxEvents events, and says the journal was cut.
func TestLoadJournalCapsEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "20261130T100000Z-aaaaaa.jsonl")
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte(`{"event":"x"}`+"\n"), MaxEvents+10), 0o644))
	j, err := LoadJournal(path, nil, nil)
	require.NoError(t, err)
	assert.Len(t, j.Events, min(MaxEvents, maxEventMemory/eventCost([]byte(`{"event":"x"}`))))
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
	j, err = LoadJournal(path, nil, nil)
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
			runs, err := ListRuns(dir, testKey)
			require.NoError(t, err)
			require.Len(t, runs, 1)
		},
		"show": func() {
			j, err := LoadJournal(path, testKey, nil)
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

// longEnd is a journal a repository could bring: a run_start, then one run_end of about n bytes
// whose value x is elem repeated (%d in elem counts) between open and close: the shapes that cost
// a map the most for their bytes.
func longEnd(tb testing.TB, n int, open, elem, close string) (dir, path string) {
	tb.Helper()
	dir = tb.TempDir()
	path = filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl")
	var b bytes.Buffer
	b.WriteString(`{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z"}` + "\n")
	b.WriteString(`{"event":"run_end","status":"OK","receipt":"OK mode=transform","x":` + open)
	for i := 0; b.Len() < n-len(elem)-len(close)-16; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strings.ReplaceAll(elem, "%d", strconv.Itoa(i)))
	}
	b.WriteString(close + "}\n")
	require.NoError(tb, os.WriteFile(path, b.Bytes(), 0o644))
	return dir, path
}

// One long line costs a reader about the line, whatever it holds: runs list reads the status of a
// long run_end without building its other values, and runs show passes over a line whose decoded
// cost is past what it keeps. The lines are 2 MiB, which -race reads in seconds. At the 16 MiB
// cap, one run_end of "{}" costs runs list 32 MB allocated (BenchmarkListLongEnd); decoded whole,
// it costs 596 MB (peak RSS), and 2 MiB of "{}" costs runs list and runs show 100 MB allocated
// each, 2 MiB of numbers 220 MB.
func TestOneLongLineIsBoundedInMemory(t *testing.T) {
	const line = 2 << 20
	bound := uint64(2*line + 4<<20) // the line's buffer as it grows (twice the line), and a little
	for _, tc := range []struct {
		name              string
		size              int
		open, elem, close string
	}{
		{"empty objects", line, "[", `{}`, "]"},
		{"one-key objects", line, "[", `{"a":0}`, "]"},
		{"one object of many keys", line, "{", `"k%d":0`, "}"},
		{"numbers", line, "[", `0`, "]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := longEnd(t, tc.size, tc.open, tc.elem, tc.close)
			measure := func(what string, read func()) {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.GC() // twice: a buffer pooled by an earlier read is gone
				runtime.ReadMemStats(&before)
				read()
				runtime.ReadMemStats(&after)
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%s: %.1f MB allocated", what, float64(alloc)/(1<<20))
				assert.Less(t, alloc, bound, what)
			}
			measure("list", func() {
				runs, err := ListRuns(dir, testKey)
				require.NoError(t, err)
				require.Len(t, runs, 1)
				assert.Equal(t, "OK", runs[0].Status, "the status of a long run_end is read")
				assert.Equal(t, "transform", runs[0].Mode)
			})
			measure("show", func() {
				j, err := LoadJournal(path, testKey, nil)
				require.NoError(t, err)
				require.NotEmpty(t, j.Events)
			})
		})
	}
}

// A key a summary reads, named twice in a run_end of any length, leaves the run's end unread.
func TestSummaryRefusesAKeyTwice(t *testing.T) {
	dir := t.TempDir()
	start := `{"event":"run_start","mode":"transform","model":"m","ts":"2026-11-30T10:00:00Z"}` + "\n"
	for name, end := range map[string]string{
		"status twice":         `{"event":"run_end","status":"OK","Status":"RED"}`,
		"event twice":          `{"event":"run_end","status":"OK","EVENT":"run_end"}`,
		"after a long value":   `{"event":"run_end","x":[` + strings.Repeat(`{},`, 1<<16) + `{}],"status":"OK","status":"RED"}`,
		"read, a key not read": `{"event":"run_end","status":"OK","x":1,"x":2}`,
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl"), []byte(start+end+"\n"), 0o644))
		runs, err := ListRuns(dir, nil)
		require.NoError(t, err)
		require.Len(t, runs, 1)
		want := "running?"
		if name == "read, a key not read" {
			want = "OK"
		}
		assert.Equal(t, want, runs[0].Status, name)
	}
}

// A summary keeps a bounded text of each field, so a list of many runs costs little per run.
func TestSummaryClipsLongText(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("é", 1<<20)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "20261130T100000Z-aaaaaa.jsonl"),
		[]byte(`{"event":"run_start","mode":"`+long+`","model":"m"}`+"\n"+`{"event":"run_end","status":"OK","receipt":"`+long+`"}`+"\n"), 0o644))
	runs, err := ListRuns(dir, nil)
	require.NoError(t, err)
	require.Len(t, runs, 1)
	for _, s := range []string{runs[0].Mode, runs[0].Receipt} {
		assert.Less(t, len(s), 4<<10)
		assert.True(t, utf8.ValidString(s))
		assert.True(t, strings.HasSuffix(s, "é..."))
	}
}

// BenchmarkListLongEnd is runs list over one journal whose run_end is 16 MiB of "{}".
func BenchmarkListLongEnd(b *testing.B) {
	dir, _ := longEnd(b, maxLine-64, "[", `{}`, "]")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ListRuns(dir, testKey); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListEmptyLines is runs list over one journal of 16 MiB of "{}" lines.
func BenchmarkListEmptyLines(b *testing.B) {
	dir := emptyLines(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ListRuns(dir, testKey); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzScanJournal reads journals of any shape through buffers of any size: every line but a seal
// reaches the reader whole and in order, a seal is found whatever the buffer, and nothing but
// the key's own seal makes a journal sealed.
func FuzzScanJournal(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "analyze", "testdata", "journals", "*.jsonl"))
	for _, name := range files[:min(len(files), 4)] {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data, uint8(0))
		}
	}
	f.Add([]byte("{}\n{}\n"), uint8(3))
	f.Add([]byte(`{"event":"seal","mac":"00","run":"r"}`+"\n"), uint8(1))
	f.Add([]byte("no newline at the end"), uint8(200))
	name := "20261130T100000Z-aaaaaa.jsonl"
	f.Fuzz(func(t *testing.T, data []byte, size uint8) {
		var got []byte
		s, err := scanSize(bytes.NewReader(data), name, testKey, func(line []byte) {
			if bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("a line with a newline: %q", line)
			}
			got = append(append(got, line...), '\n')
		}, 16+int(size))
		require.NoError(t, err)
		var want []byte
		for _, line := range bytes.SplitAfter(data, []byte{'\n'}) {
			if len(line) > 0 && !bytes.HasPrefix(line, sealPrefix) {
				want = append(append(want, bytes.TrimSuffix(line, []byte{'\n'})...), '\n')
			}
		}
		require.Equal(t, string(want), string(got))
		require.False(t, s.Sealed, "sealed without the key's seal")

		// The same bytes sealed under the key are sealed, read through any buffer.
		sealed := append(bytes.Clone(data), '\n')
		sealed = append(sealed, sealLine(time.Unix(0, 0), "r", sealMAC(testKey, "r", name, sha256Of(sealed)))...)
		s, err = scanSize(bytes.NewReader(sealed), name, testKey, nil, 16+int(size))
		require.NoError(t, err)
		require.Equal(t, Seal{Sealed: true, Run: "r"}, s.Seal)
	})
}

func sha256Of(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

// A journal is live while its writer holds it open, and not once it closed (or its process died).
func TestJournalLiveWhileItsWriterHoldsIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "20261205T120000Z-abcdef.jsonl")
	j, err := OpenJournal(path, "20261205T120000Z-abcdef")
	require.NoError(t, err)
	j.Emit(RunStartEvent{Mode: "transform"})
	assert.True(t, JournalLive(path))
	require.NoError(t, j.Close())
	assert.False(t, JournalLive(path))
	assert.False(t, JournalLive(filepath.Join(t.TempDir(), "none.jsonl")))
}
