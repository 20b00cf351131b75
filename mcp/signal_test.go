package mcp

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/scripted"
)

// hang bounds a wait that only a hang reaches.
const hang = time.Minute

// logLines hands each line the scripted server logs (one a request) to a channel.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimSpace(string(p)), "\n") {
		select {
		case l <- line:
		default:
		}
	}
	return len(p), nil
}

// A signal ends the context Run serves under. With the host still holding stdin open, as every
// host does, each call in flight stops at once: the verify and the child it left are stopped,
// or the model request dropped; the file has its bytes back; and Run returns the signal.
func TestSignalStopsTheCallsInFlightWithStdinOpen(t *testing.T) {
	for _, tc := range []struct {
		name string
		// verify is the call's verify: it writes its child's pid to child.pid, then says on
		// ready.fifo that it runs.
		verify string
		reply  scripted.Reply
		// inVerify: the signal comes once the verify runs; else once the model request came.
		inVerify bool
	}{
		{
			name:     "while the verify runs",
			verify:   `sleep 1234.71 & echo $! > child.pid; echo ready > ready.fifo; wait`,
			reply:    scripted.Reply{StreamAnswer: &goodEdit},
			inVerify: true,
		},
		{
			name:   "while the model request hangs",
			verify: "true",
			reply:  scripted.Reply{Hang: scripted.Duration(30 * time.Minute), StreamAnswer: &goodEdit},
		},
		{
			name:   "while the reply drips in",
			verify: "true",
			reply:  scripted.Reply{Drip: scripted.Duration(time.Minute), StreamAnswer: &goodEdit},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			gittest.Init(t, root)
			require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte(calc), 0o644))
			require.NoError(t, syscall.Mkfifo(filepath.Join(root, "ready.fifo"), 0o644))
			llm := scripted.New()
			t.Cleanup(llm.Close)
			require.NoError(t, llm.Mimic("lmstudio"))
			llm.On("POST", "/v1/chat/completions", tc.reply)
			requests := make(logLines, 64)
			llm.SetLog(requests)

			// The verify's child is found by its pid, which only the process group's sandbox shows.
			env := map[string]string{"LOCUM_BASE_URL": llm.BaseURL(), "LOCUM_SANDBOX": "none"}
			s, err := New(Options{Dir: root, Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }, AllowModel: true, Version: "test"})
			require.NoError(t, err)

			// The host's end of stdin stays open until the test is over.
			stdin, host := io.Pipe()
			t.Cleanup(func() { host.Close() })
			answers, stdout := io.Pipe()
			t.Cleanup(func() { answers.Close() })
			go func() { _, _ = io.Copy(io.Discard, answers) }()
			ctx, stop := context.WithCancelCause(context.Background())
			defer stop(nil)
			done := make(chan error, 1)
			go func() { done <- s.Run(ctx, Stdio(ctx, stdin, stdout)) }()

			call := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}` + "\n" +
				`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
				`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"transform","arguments":{"file":"calc.go","verify":` +
				strconv.Quote(tc.verify) + `,"task":"make Add add","model":"qwen3-coder-30b","no_baseline":true}}}` + "\n"
			go func() { _, _ = io.WriteString(host, call) }()

			if tc.inVerify {
				waitLine(t, filepath.Join(root, "ready.fifo"))
				assert.NotEqual(t, calc, readFile(t, filepath.Join(root, "calc.go")), "the edit is on disk while the verify runs")
			} else {
				deadline := time.After(hang)
				for line := ""; !strings.Contains(line, "/v1/chat/completions"); {
					select {
					case line = <-requests:
					case <-deadline:
						t.Fatal("no model request came")
					}
				}
			}

			stop(&client.SignalError{Signal: syscall.SIGTERM})
			select {
			case err := <-done:
				var sig *client.SignalError
				require.ErrorAs(t, err, &sig)
				assert.Equal(t, "stopped by SIGTERM", err.Error())
			case <-time.After(hang):
				t.Fatal("Run did not return after the signal: the call in flight was not stopped")
			}
			assert.Equal(t, calc, readFile(t, filepath.Join(root, "calc.go")), "the file has its original bytes")
			if tc.inVerify {
				pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(root, "child.pid"))))
				require.NoError(t, err)
				deadline := time.Now().Add(hang)
				for !gone(pid) {
					require.True(t, time.Now().Before(deadline), "the verify's child %d still runs", pid)
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// waitLine waits for a line on a named pipe: the verify's word that it runs.
func waitLine(t *testing.T, fifo string) {
	t.Helper()
	got := make(chan error, 1)
	go func() {
		f, err := os.Open(fifo)
		if err == nil {
			_, err = bufio.NewReader(f).ReadString('\n')
			f.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(hang):
		t.Fatal("the verify never said it runs")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(data)
}

// gone says whether pid has ended: no such process, or a zombie not yet reaped.
func gone(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && strings.Contains(string(stat), ") Z ")
}

// A call that does not stop when told to (stuck in the system) keeps the server from exiting for
// a bounded while only; the error says what was left.
func TestSignalWaitsForAStuckCallBoundedly(t *testing.T) {
	root := t.TempDir()
	gittest.Init(t, root)
	s, err := New(Options{Dir: root, Version: "test"})
	require.NoError(t, err)
	s.stopWait = 100 * time.Millisecond
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	sdk.AddTool(s.SDK(), &sdk.Tool{Name: "stuck"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		defer s.begin()()
		close(entered)
		<-release
		return &sdk.CallToolResult{}, nil, nil
	})

	stdin, host := io.Pipe()
	t.Cleanup(func() { host.Close() })
	answers, stdout := io.Pipe()
	t.Cleanup(func() { answers.Close() })
	go func() { _, _ = io.Copy(io.Discard, answers) }()
	ctx, stop := context.WithCancelCause(context.Background())
	defer stop(nil)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, Stdio(ctx, stdin, stdout)) }()
	go func() {
		_, _ = io.WriteString(host, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"stuck","arguments":{}}}`+"\n")
	}()
	select {
	case <-entered:
	case <-time.After(hang):
		t.Fatal("the call never began")
	}
	stop(&client.SignalError{Signal: syscall.SIGINT})
	select {
	case err := <-done:
		var sig *client.SignalError
		require.ErrorAs(t, err, &sig)
		assert.Equal(t, "stopped by SIGINT; calls still running 100ms later, left as they were: 1 (the next locum command restores a file a call left edited)", err.Error())
	case <-time.After(hang):
		t.Fatal("Run waited for the stuck call past its bound")
	}
}
