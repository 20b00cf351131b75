package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/locumdev/locum/runner/scripted"
)

// BenchmarkCallOverhead measures what locum itself costs per model call: a whole process, from
// start to receipt, running `locum transform` against a scripted server that answers at once,
// minus the server's own time and the verify shell's. It also times `node -e 0`, the start-up
// of the Node.js runner locum replaces, where node is installed.
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
	call := func() {
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "transform", "--file", "calc.go", "--verify", "true", "--model", "m", "make Add add")
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "LOCUM_BASE_URL="+srv.BaseURL())
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("locum transform: %v\n%s", err, out)
		}
	}
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
	// during the run weighs on all of them alike: their ratios are what the README quotes.
	var wall, server, shell, curlTime, nodeTime time.Duration
	b.ResetTimer()
	for range b.N {
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
