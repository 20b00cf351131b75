package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/runner/scripted"
)

// BenchmarkHostBytes measures what one kept transform costs the host in bytes it writes and reads,
// on the command line and over MCP: the call (the command line, or the tool's name and arguments
// as JSON) and what comes back (stderr and stdout, or the result's text and its structured
// content as JSON), and what reviewing the edit with git diff would add (the call and its output)
// for a result that carries no compact diff. These are the bytes a host pays for in tokens; the
// README quotes them.
func BenchmarkHostBytes(b *testing.B) {
	llm := scripted.New()
	b.Cleanup(llm.Close)
	if err := llm.Mimic("lmstudio"); err != nil {
		b.Fatal(err)
	}
	answer := "```go\nfunc Add(a, b int) int {\n\treturn a + b\n}\n```"
	llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &answer})
	root := b.TempDir()
	gittest.Init(b, root)
	file := filepath.Join(root, "calc.go")
	orig := []byte("package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	home := b.TempDir()
	b.Setenv("HOME", home)
	b.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	b.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	b.Setenv("XDG_CACHE_HOME", filepath.Join(home, "cache"))
	b.Setenv("LOCUM_BASE_URL", llm.BaseURL())
	// Every iteration is the same small kept edit, which the pay gate would stop after a few.
	b.Setenv("LOCUM_DELEGATE_WHEN", "always")
	b.Chdir(root)
	if err := os.WriteFile(file, orig, 0o644); err != nil {
		b.Fatal(err)
	}
	gittest.Git(b, root, "add", "calc.go")
	gittest.Git(b, root, "commit", "-qm", "calc")

	server, err := mcp.New(mcp.Options{Dir: root, Env: os.LookupEnv, AllowModel: true, Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	serverT, clientT := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, serverT) }()
	session, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		session.Close()
		cancel()
		<-done
	})

	task := "make Add add its arguments"
	verify := `grep -q "a + b" calc.go`
	argv := []string{"locum", "transform", "--file", "calc.go", "--lines", "4-6", "--verify", verify, "--model", "qwen3-coder-30b", task}
	args := map[string]any{"file": "calc.go", "lines": "4-6", "verify": verify, "model": "qwen3-coder-30b", "task": task}
	// Without a compact diff in the result, a host reviews a kept edit by asking git for it.
	review := []string{"git", "diff", "--", "calc.go"}
	var cliCall, cliResult, mcpCall, mcpResult, mcpText, gitReview int
	var lastOut, lastErr, lastCall, lastResult string
	b.ResetTimer()
	for range b.N {
		if err := os.WriteFile(file, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), argv, strings.NewReader(""), &stdout, &stderr); code != 0 {
			b.Fatalf("locum transform exited %d:\n%s", code, stderr.String())
		}
		cliCall = len(shellLine(argv))
		cliResult = stdout.Len() + stderr.Len()
		lastOut, lastErr = stdout.String(), stderr.String()
		diff, err := exec.Command(review[0], review[1:]...).Output()
		if err != nil {
			b.Fatal(err)
		}
		gitReview = len(shellLine(review)) + len(diff)

		if err := os.WriteFile(file, orig, 0o644); err != nil {
			b.Fatal(err)
		}
		res, err := session.CallTool(ctx, &sdk.CallToolParams{Name: "transform", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("transform tool: %v %+v", err, res)
		}
		call, _ := json.Marshal(map[string]any{"name": "transform", "arguments": args})
		mcpCall = len(call)
		lastCall, lastResult = string(call), ""
		mcpText = 0
		for _, c := range res.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				lastResult += t.Text + "\n"
				mcpText += len(t.Text)
			}
		}
		if res.StructuredContent != nil {
			data, _ := json.Marshal(res.StructuredContent)
			lastResult += string(data)
		}
		mcpResult = len(lastResult) - len(res.Content)
	}
	if os.Getenv("LOCUM_BENCH_SHOW") != "" {
		b.Logf("cli call: %s\ncli result:\n%s%s\nmcp call: %s\nmcp result: %s", shellLine(argv), lastOut, lastErr, lastCall, lastResult)
	}
	b.ReportMetric(float64(cliCall), "cli-call-bytes")
	b.ReportMetric(float64(cliResult), "cli-result-bytes")
	b.ReportMetric(float64(mcpCall), "mcp-call-bytes")
	b.ReportMetric(float64(mcpResult), "mcp-result-bytes")
	b.ReportMetric(float64(mcpText), "mcp-text-bytes")
	b.ReportMetric(float64(gitReview), "git-diff-review-bytes")
}
