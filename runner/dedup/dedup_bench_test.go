package dedup

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// benchRepo is a repository with an empty notes folder for a benchmark's screen.
func benchRepo(b *testing.B) (root, notes string) {
	root = b.TempDir()
	require.NoError(b, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	notes = filepath.Join(root, "notes")
	require.NoError(b, os.Mkdir(notes, 0o755))
	return root, notes
}

// BenchmarkDedupWarm re-runs a whole dedup after one file changed (list the entries, read each
// under the budget, read every other vector from the warm cache, embed the changed one in one
// request, store it, score) on a folder of random 768-dimension vectors with pairs planted from
// 0.78 to 1. The peak RSS is the whole process's, set-up included. LOCUM_BENCH_FILES sets the folder size (default 10,000); the
// issue's rows are 50,000 and 100,000. It reports the method auto chose and the heap peak.
func BenchmarkDedupWarm(b *testing.B) {
	n := 10000
	if v := os.Getenv("LOCUM_BENCH_FILES"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	root, dir := benchRepo(b)
	s := scripted.New()
	defer s.Close()
	require.NoError(b, s.Mimic("llama-server"))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(b, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	settings, err := c.Resolve("dedup", nil, map[string]string{"base-url": s.BaseURL(), "model": "m"})
	require.NoError(b, err)

	// Warm the cache as a first run would have left it.
	cache := VectorCache{Path: filepath.Join(b.TempDir(), CacheFileName)}
	spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: settings, Model: "m", JournalPath: filepath.Join(root, "j.jsonl")}
	probe := engine.Execute(context.Background(), spec, []engine.Step{{Name: "key", Run: func(ctx context.Context, r *engine.Run) error {
		if err := r.Connect(); err != nil {
			return err
		}
		key := r.Client.EmbeddingKey(ctx, "m")
		// Every tenth vector is planted near the one before it, at a cosine from 0.78 to 1;
		// stored a thousand at a time, so the set-up's memory does not hide the run's in the peak
		// RSS.
		rng := rand.New(rand.NewPCG(31, 32))
		var prev []float64
		var batch []Entry
		for i := range n {
			v := runtest.RandomUnit(rng, 1, 768)[0]
			if i%10 == 1 {
				v = nearby(rng, prev, 0.78+0.22*rng.Float64())
			}
			prev = v
			text := fmt.Sprintf("entry %d\n", i)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%06d.md", i)), []byte(text), 0o644); err != nil {
				return err
			}
			f := make([]float32, len(v))
			for k := range v {
				f[k] = float32(v[k])
			}
			batch = append(batch, Entry{Hash: TextHash(text), Vector: f})
			if len(batch) == 1000 || i == n-1 {
				if _, err := cache.Store(key, batch, nil); err != nil {
					return err
				}
				batch = nil
			}
		}
		return nil
	}}})
	require.Nil(b, probe.Error)

	runtime.GC()
	peak := uint64(0)
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	// Each run finds one file changed since the last, as a re-run after an edit does, and the
	// server embeds it.
	one := make([]string, 768)
	for i := range one {
		one[i] = "0"
	}
	one[0] = "1"
	s.On("POST", "/v1/embeddings", runtest.JSON(`{"data":[{"index":0,"embedding":[`+strings.Join(one, ",")+`]}]}`))
	// The first screen scores every pair and keeps the screen; each timed run is a re-run.
	var found Result
	first := time.Now()
	res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, Cache: cache}, &found))
	require.Nil(b, res.Error)
	firstScreen := time.Since(first)
	firstPairs, firstGroups := found.Total, len(found.Groups)
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		require.NoError(b, os.WriteFile(filepath.Join(dir, "000000.md"), []byte(fmt.Sprintf("entry 0, edited %d\n", i)), 0o644))
		found = Result{}
		b.StartTimer()
		res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, Cache: cache}, &found))
		require.Nil(b, res.Error)
	}
	b.StopTimer()
	close(stop)
	<-done
	require.Equal(b, n-1, found.Cached)
	require.Equal(b, n-1, found.Reused)
	require.Len(b, s.RequestsTo("/v1/embeddings"), b.N, "one request a run")
	// The changed file's old vector was planted near the next file's; its new one is near none.
	require.Equal(b, firstPairs-1, found.Total)
	require.Equal(b, firstGroups-1, len(found.Groups))
	fi, err := os.Stat(cache.Path)
	require.NoError(b, err)
	b.ReportMetric(float64(fi.Size())/(1<<20), "cache-file-MiB")
	b.ReportMetric(firstScreen.Seconds(), "first-screen-s")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux reports KiB
	}
	b.ReportMetric(float64(found.Total), "pairs")
	b.Logf("files=%d method=%s pairs=%d groups=%d", n, found.Method, found.Total, len(found.Groups))
}

// BenchmarkLexicalScreen runs a whole lexical screen (list the entries, read each under the
// budget, shingle, find the candidates, score them) of generated notes at the default threshold,
// in a process of its own so its peak RSS is the screen's alone, and holds what it lists to the
// reference (exactLexicalPairs): recall and precision, with the seconds and the peak RSS.
// LOCUM_BENCH_FILES sets the number of notes (default 20,000); docs/performance.md quotes 50,000 and
// 100,000.
func BenchmarkLexicalScreen(b *testing.B) {
	n := 20000
	if v := os.Getenv("LOCUM_BENCH_FILES"); v != "" {
		var err error
		n, err = strconv.Atoi(v)
		require.NoError(b, err)
	}
	root, dir := benchRepo(b)
	texts := generatedNotes(n, 3)
	nm := make([]string, n)
	for i, text := range texts {
		nm[i] = fmt.Sprintf("%06d.md", i)
		require.NoError(b, os.WriteFile(filepath.Join(dir, nm[i]), []byte(text), 0o644))
	}
	out := filepath.Join(root, "pairs.json")
	var elapsed time.Duration
	var rss int64
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestLexicalScreenChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), "LOCUM_SCREEN_CHILD="+root, "LOCUM_SCREEN_OUT="+out)
		start := time.Now()
		output, err := cmd.CombinedOutput()
		elapsed += time.Since(start)
		require.NoError(b, err, string(output))
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = max(rss, ru.Maxrss)
		}
	}
	b.StopTimer()
	data, err := os.ReadFile(out)
	require.NoError(b, err)
	var got []Pair
	require.NoError(b, json.Unmarshal(data, &got))
	want := exactLexicalPairs(LexicalEntries(texts), nm, DefaultJaccard)
	recall, precision := lexicalRecall(got, want)
	b.ReportMetric(elapsed.Seconds()/float64(b.N), "screen-s")
	b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB") // Linux reports KiB
	b.ReportMetric(recall, "recall")
	b.ReportMetric(precision, "precision")
	b.Logf("files=%d pairs=%d listed=%d recall=%.4f precision=%.4f", n, len(want), len(got), recall, precision)
}

// TestLexicalScreenChild is BenchmarkLexicalScreen's screen, run only in the process it starts.
func TestLexicalScreenChild(t *testing.T) {
	root := os.Getenv("LOCUM_SCREEN_CHILD")
	if root == "" {
		t.Skip("run by BenchmarkLexicalScreen")
	}
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	settings, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve("dedup", nil, map[string]string{"method": "lexical"})
	require.NoError(t, err)
	var found Result
	res := engine.Execute(context.Background(), engine.RunSpec{Mode: "dedup", Root: root, Settings: settings, JournalPath: filepath.Join(root, "j.jsonl")},
		Steps(Options{Dir: filepath.Join(root, "notes"), Root: root, Pairs: true}, &found))
	require.Nil(t, res.Error)
	data, err := json.Marshal(found.Pairs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(os.Getenv("LOCUM_SCREEN_OUT"), data, 0o644))
}
