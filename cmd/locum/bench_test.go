package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
)

// BenchmarkCallOverhead measures what locum itself costs per model call: a whole process, from
// start to receipt, running `locum transform` against a scripted server that answers at once,
// minus the server's own time and the verify shell's. It also times `node -e 0`, the start-up
// of the Node.js runner locum replaces, where node is installed.
//
// Every call starts from an empty ledger, as a repository's first delegation does: the journals
// of the calls before it would be a ledger the break-even gate reads, and the gate rightly refuses
// a role whose ledger says spans this small lose, whatever the timing. The gate still runs, over
// no journal; a repository with a ledger pays for reading its newest journals on top.
func BenchmarkCallOverhead(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "locum")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(repo, "calc.go")
	orig := []byte("package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	srv := scripted.New()
	defer srv.Close()
	if err := srv.Mimic("lmstudio"); err != nil {
		b.Fatal(err)
	}
	answer := "```go\npackage calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```"
	srv.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &answer})
	runs, err := engine.RunsDir(repo)
	if err != nil {
		b.Fatal(err)
	}
	// fresh gives the next call its starting state, outside the time measured.
	fresh := func() {
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.RemoveAll(runs); err != nil {
			b.Fatal(err)
		}
	}
	call := func() {
		cmd := exec.Command(bin, "transform", "--file", "calc.go", "--verify", "true", "--model", "qwen3-coder-30b", "make Add add")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "LOCUM_BASE_URL="+srv.BaseURL())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("locum transform: %v\n%s", err, out)
		}
	}
	fresh()
	call() // warm the page cache
	// curl sends the chat request locum sent, to the same server, in a process of its own: the
	// floor for one call from a shell. transform-vs-curl is locum's whole call over curl's.
	var body []byte
	for _, r := range srv.Requests() {
		if r.Path == "/v1/chat/completions" {
			body = r.Body
		}
	}
	curl, _ := exec.LookPath("curl")
	node, _ := exec.LookPath("node")
	timed := func(run func()) time.Duration {
		start := time.Now()
		run()
		return time.Since(start)
	}
	// The four are interleaved, one of each per iteration, so that a change in the machine's load
	// during the run weighs on all of them alike: their ratios are what docs/performance.md quotes.
	var wall, server, shell, curlTime, nodeTime time.Duration
	b.ResetTimer()
	for range b.N {
		fresh()
		served := srv.ServedTime()
		wall += timed(call)
		server += srv.ServedTime() - served
		shell += timed(func() {
			if err := exec.Command("bash", "-c", "true").Run(); err != nil {
				b.Fatal(err)
			}
		})
		if curl != "" {
			curlTime += timed(func() {
				cmd := exec.Command(curl, "-sf", "-o", "/dev/null", "-H", "Content-Type: application/json", "--data-binary", "@-", srv.BaseURL()+"/chat/completions")
				cmd.Stdin = bytes.NewReader(body)
				if out, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("curl: %v\n%s", err, out)
				}
			})
		}
		if node != "" {
			nodeTime += timed(func() {
				if err := exec.Command(node, "-e", "0").Run(); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
	b.StopTimer()
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perOp(wall), "wall-ms/call")
	b.ReportMetric(perOp(server), "server-ms/call")
	b.ReportMetric(perOp(shell), "verify-shell-ms/call")
	b.ReportMetric(perOp(wall-server-shell), "overhead-ms/call")
	if curl != "" {
		b.ReportMetric(perOp(curlTime), "curl-ms/call")
		b.ReportMetric(float64(wall-shell)/float64(curlTime), "transform-vs-curl")
	}
	if node != "" {
		b.ReportMetric(perOp(nodeTime), "node-startup-ms")
		b.ReportMetric(float64(wall-server-shell)/float64(nodeTime), "overhead-vs-node")
	}
}

// BenchmarkDedupManyPairs runs a whole `locum dedup --method lexical --threshold 0` over a folder
// of generated notes, every pair of them, four ways: with --pairs, every pair printed to a file
// (what a pipe gets), the top 50 (what a terminal gets, or --top 50), and --json; and as groups,
// the default. It reports each run's wall time and peak resident memory, the journal's size, and,
// where strace is installed, the write(2) calls of the printed run.
//
// The folder has 500 notes (124,750 pairs); LOCUM_BENCH_PAIRS_FILES sets another size, such as
// docs/performance.md's 2000 (1,999,000 pairs: the four runs take about half a minute on a 2-core machine,
// and one of them up to 800 MiB).
func BenchmarkDedupManyPairs(b *testing.B) {
	files := 500
	if v := os.Getenv("LOCUM_BENCH_PAIRS_FILES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("LOCUM_BENCH_PAIRS_FILES=%q: want a number of files, 2 or more", v)
		}
		files = n
	}
	dir := b.TempDir()
	bin := filepath.Join(dir, "locum")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	repo := filepath.Join(dir, "repo")
	notes := filepath.Join(repo, "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		b.Fatal(err)
	}
	gittest.Init(b, repo)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range files {
		var sb strings.Builder
		for range 120 {
			fmt.Fprintf(&sb, "w%d ", rng.IntN(3000))
		}
		if err := os.WriteFile(filepath.Join(notes, fmt.Sprintf("%04d.md", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	type figures struct {
		wall    time.Duration
		maxRSS  int64 // KiB
		journal int64
	}
	run := func(name string, args ...string) figures {
		journal := filepath.Join(dir, name+".jsonl")
		out, err := os.Create(filepath.Join(dir, name+".out"))
		if err != nil {
			b.Fatal(err)
		}
		defer out.Close()
		cmd := exec.Command(bin, append([]string{"dedup", "--dir", "notes", "--method", "lexical", "--threshold", "0", "--journal", journal}, args...)...)
		var stderr bytes.Buffer
		cmd.Dir, cmd.Stdout, cmd.Stderr = repo, out, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("locum dedup %v: %v\n%s", args, err, stderr.Bytes())
		}
		f := figures{wall: time.Since(start)}
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			f.maxRSS = ru.Maxrss
		}
		if st, err := os.Stat(journal); err == nil {
			f.journal = st.Size()
		}
		return f
	}
	var all, top, asJSON, groups figures
	b.ResetTimer()
	for range b.N {
		all = run("all", "--pairs")
		top = run("top", "--pairs", "--top", "50")
		asJSON = run("json", "--pairs", "--json")
		groups = run("groups")
	}
	b.StopTimer()
	mib := func(kib int64) float64 { return float64(kib) / 1024 }
	b.ReportMetric(all.wall.Seconds(), "all-s")
	b.ReportMetric(mib(all.maxRSS), "all-MiB")
	b.ReportMetric(top.wall.Seconds(), "top50-s")
	b.ReportMetric(mib(top.maxRSS), "top50-MiB")
	b.ReportMetric(asJSON.wall.Seconds(), "json-s")
	b.ReportMetric(mib(asJSON.maxRSS), "json-MiB")
	b.ReportMetric(groups.wall.Seconds(), "groups-s")
	b.ReportMetric(mib(groups.maxRSS), "groups-MiB")
	b.ReportMetric(float64(all.journal), "journal-bytes")
	if strace, err := exec.LookPath("strace"); err == nil {
		trace := filepath.Join(dir, "strace.txt")
		cmd := exec.Command(strace, "-f", "-c", "-e", "trace=write", "-o", trace, bin, "dedup", "--dir", "notes", "--method", "lexical", "--threshold", "0", "--pairs", "--journal", filepath.Join(dir, "s.jsonl"))
		cmd.Dir, cmd.Stdout = repo, io.Discard
		if err := cmd.Run(); err == nil {
			if data, err := os.ReadFile(trace); err == nil {
				if m := regexp.MustCompile(`(?m)^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?write$`).FindSubmatch(data); m != nil {
					calls, _ := strconv.Atoi(string(m[1]))
					b.ReportMetric(float64(calls), "writes")
				}
			}
		}
	}
}
