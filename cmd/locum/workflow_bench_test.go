package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/scripted"
)

// benchItems is how many declarations the workflow benchmark edits, and benchLatency how long each
// scripted server takes over a reply: a small model's answer to a short span on a laptop is of
// that order, and it is the wait the pool overlaps.
const (
	benchItems   = 8
	benchLatency = 300 * time.Millisecond
)

// BenchmarkWorkflowPool measures what a pool of servers buys: the wall time of `locum run` over
// the 8 declarations of a file with --jobs 4 across two scripted servers, against the same items
// run one by one, as `locum run --jobs 1` on one server and as 8 `locum transform --symbol`
// calls in a row (what a host does without a workflow), and the bytes a host writes and reads
// for the one workflow call against the 8 transform calls. Each server answers every request after
// benchLatency; every item is the real thing: a worktree, the baseline verify, the edit, the
// verify, the commit, the combine, and the final verify.
func BenchmarkWorkflowPool(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "locum")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	servers := make([]*scripted.Server, 2)
	for i := range servers {
		srv := scripted.New()
		defer srv.Close()
		if err := srv.Mimic("lmstudio"); err != nil {
			b.Fatal(err)
		}
		var replies []scripted.Reply
		for n := 1; n <= benchItems; n++ {
			answer := fmt.Sprintf("```go\n// F%d is item %d.\nfunc F%d() string {\n\treturn \"done%d\"\n}\n```", n, n, n, n)
			replies = append(replies, scripted.Reply{When: fmt.Sprintf("declaration of F%d,", n), StreamAnswer: &answer, Hang: scripted.Duration(benchLatency)})
		}
		srv.On("POST", "/v1/chat/completions", replies...)
		servers[i] = srv
	}
	n := 0
	repo := func() string {
		n++
		root := filepath.Join(dir, fmt.Sprintf("repo%d", n))
		writeBenchRepo(b, root)
		return root
	}
	// locum runs one call and counts what a host pays for it in bytes: the command line it
	// writes and the stdout and stderr it reads back.
	locum := func(root string, args ...string) int {
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "LOCUM_BASE_URL="+servers[0].BaseURL(), "LOCUM_DELEGATE_WHEN=always")
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("locum %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return len(shellLine(append([]string{"locum"}, args...))) + len(out)
	}
	pool := servers[0].BaseURL() + "," + servers[1].BaseURL()
	timed := func(run func()) time.Duration {
		start := time.Now()
		run()
		return time.Since(start)
	}
	// The three are interleaved, one of each per iteration, so a change in the machine's load
	// weighs on all alike.
	var parallel, serial, calls time.Duration
	var runBytes, callsBytes int
	b.ResetTimer()
	for range b.N {
		root := repo()
		parallel += timed(func() {
			runBytes = locum(root, "run", "fix-all", "--param", "dir=calc", "--servers", pool, "--jobs", "4", "--model", "qwen3-coder-30b", "--on-red-baseline", "continue")
		})
		root = repo()
		serial += timed(func() {
			locum(root, "run", "fix-all", "--param", "dir=calc", "--jobs", "1", "--model", "qwen3-coder-30b", "--on-red-baseline", "continue")
		})
		root = repo()
		calls += timed(func() {
			callsBytes = 0
			for i := 1; i <= benchItems; i++ {
				callsBytes += locum(root, "transform", "--file", "calc/calc.go", "--symbol", fmt.Sprintf("F%d", i),
					"--verify", fmt.Sprintf("grep -q done%d calc/calc.go", i), "--model", "qwen3-coder-30b", fmt.Sprintf("make F%d return its number", i))
			}
		})
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d.Milliseconds()) / float64(b.N) }
	b.ReportMetric(per(parallel), "jobs4-2servers-ms")
	b.ReportMetric(per(serial), "jobs1-1server-ms")
	b.ReportMetric(per(calls), "8-transforms-ms")
	b.ReportMetric(float64(parallel)/float64(serial), "jobs4/jobs1")
	b.ReportMetric(float64(parallel)/float64(calls), "jobs4/transforms")
	b.ReportMetric(float64(runBytes), "run-host-bytes")
	b.ReportMetric(float64(callsBytes), "transforms-host-bytes")
	b.ReportMetric(float64(runBytes)/float64(callsBytes), "run/transforms-bytes")
}

// writeBenchRepo makes a git repository at root with a package of benchItems functions and a
// workspace whose pack declares the workflow that edits each.
func writeBenchRepo(b *testing.B, root string) {
	b.Helper()
	var src strings.Builder
	src.WriteString("package calc\n")
	for i := 1; i <= benchItems; i++ {
		fmt.Fprintf(&src, "\n// F%d is item %d.\nfunc F%d() string {\n\treturn \"todo\"\n}\n", i, i, i)
	}
	files := map[string]string{
		"calc/calc.go":          src.String(),
		".locum/workspace.json": `{"packs":["tools/local-llm","tools/demo"]}`,
		".locum/packs/tools/demo/pack.json": `{"portulan":{"pack":"1.2"},"name":"demo","category":"tools","contributes":{"workflows":{"fix-all":{` +
			`"params":{"dir":{}},"steps":[{"name":"fix","mode":"transform","for_each":{"symbols":"{{dir}}/*.go"},` +
			`"with":{"task":"make {{symbol}} return its number","verify":"grep -q 'return \"done' {{file}}"}}],` +
			`"verify":"test $(grep -c done calc/calc.go) -eq 8"}}}}`,
	}
	for name, text := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	gittest.Init(b, root)
	gittest.CommitAll(b, root)
}
