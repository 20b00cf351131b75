package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scripted"
	"github.com/locumdev/locum/schema"
)

// BenchmarkStatusCall measures what an MCP status call costs once the host is connected: a built
// `locum mcp` over stdio, as a host runs it, against the same question asked by starting a
// `locum status` process each time and by calling the engine directly in this process. The
// scripted server's own time is subtracted from each.
func BenchmarkStatusCall(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "locum")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/locumdev/locum/cmd/locum").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o755); err != nil {
		b.Fatal(err)
	}
	srv := scripted.New()
	defer srv.Close()
	if err := srv.Mimic("lmstudio"); err != nil {
		b.Fatal(err)
	}
	env := append(os.Environ(), "LOCUM_BASE_URL="+srv.BaseURL())
	ctx := context.Background()

	host := exec.Command(bin, "mcp")
	host.Dir, host.Env = repo, env
	client := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil)
	session, err := client.Connect(ctx, &sdk.CommandTransport{Command: host}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer session.Close()
	mcpCall := func() {
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "status", Arguments: map[string]any{}})
		if err != nil || res.IsError {
			b.Fatalf("status: %v %+v", err, res)
		}
	}
	processCall := func() {
		cmd := exec.Command(bin, "status")
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("locum status: %v\n%s", err, out)
		}
	}
	v, err := schema.New()
	if err != nil {
		b.Fatal(err)
	}
	c, err := packs.Compose(v, repo)
	if err != nil {
		b.Fatal(err)
	}
	shared, err := c.Resolve("", func(k string) (string, bool) {
		if k == "LOCUM_BASE_URL" {
			return srv.BaseURL(), true
		}
		return "", false
	}, nil)
	if err != nil {
		b.Fatal(err)
	}
	directCall := func() {
		if rep := engine.CheckEndpoint(ctx, shared, engine.StatusModels{}); !rep.Up {
			b.Fatalf("direct: %+v", rep.Error)
		}
	}
	// timed runs fn b.N times and returns locum's part: the wall time less the server's.
	timed := func(fn func()) float64 {
		fn() // warm up: the page cache, the first connection
		served := srv.ServedTime()
		start := time.Now()
		for range b.N {
			fn()
		}
		d := time.Since(start) - (srv.ServedTime() - served)
		return float64(d.Microseconds()) / 1000 / float64(b.N)
	}
	b.ResetTimer()
	viaMCP := timed(mcpCall)
	b.StopTimer()
	viaProcess := timed(processCall)
	direct := timed(directCall)
	b.ReportMetric(viaMCP, "mcp-ms/call")
	b.ReportMetric(viaProcess, "process-ms/call")
	b.ReportMetric(direct, "direct-ms/call")
	b.ReportMetric(viaProcess/viaMCP, "process/mcp")
}
