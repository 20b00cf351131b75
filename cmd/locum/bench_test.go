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
	served := srv.ServedTime()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		call()
	}
	wall := time.Since(start)
	b.StopTimer()
	server := srv.ServedTime() - served

	shellStart := time.Now()
	for range b.N {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
	shell := time.Since(shellStart)
	perOp := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(perOp(wall), "wall-ms/call")
	b.ReportMetric(perOp(server), "server-ms/call")
	b.ReportMetric(perOp(shell), "verify-shell-ms/call")
	b.ReportMetric(perOp(wall-server-shell), "overhead-ms/call")
	// curl sends the chat request locum sent, to the same server, in a process of its own: the
	// floor for one call from a shell. transform-vs-curl is locum's whole call over curl's.
	if curl, err := exec.LookPath("curl"); err == nil {
		var body []byte
		for _, r := range srv.Requests() {
			if r.Path == "/v1/chat/completions" {
				body = r.Body
			}
		}
		curlStart := time.Now()
		for range b.N {
			cmd := exec.Command(curl, "-sf", "-o", "/dev/null", "-H", "Content-Type: application/json", "--data-binary", "@-", srv.BaseURL()+"/chat/completions")
			cmd.Stdin = bytes.NewReader(body)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("curl: %v\n%s", err, out)
			}
		}
		curlTime := time.Since(curlStart)
		b.ReportMetric(perOp(curlTime), "curl-ms/call")
		b.ReportMetric(float64(wall-shell)/float64(curlTime), "transform-vs-curl")
	}
	if node, err := exec.LookPath("node"); err == nil {
		nodeStart := time.Now()
		for range b.N {
			if err := exec.Command(node, "-e", "0").Run(); err != nil {
				b.Fatal(err)
			}
		}
		nodeTime := time.Since(nodeStart)
		b.ReportMetric(perOp(nodeTime), "node-startup-ms")
		b.ReportMetric(float64(wall-server-shell)/float64(nodeTime), "overhead-vs-node")
	}
}
