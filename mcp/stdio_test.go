package mcp

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stdioAfter reads in through the transport, writes out as the server's answers, and reports
// whether the reader may report the end of its input now (every request answered).
func stdioAfter(t *testing.T, in, out string) (idle bool, w string) {
	t.Helper()
	var buf bytes.Buffer
	tr := Stdio(context.Background(), strings.NewReader(in), &buf).(*sdk.IOTransport)
	r := tr.Reader.(*drainReader)
	got := make([]byte, len(in)+1)
	n, err := io.ReadFull(r, got[:len(in)])
	require.NoError(t, err)
	require.Equal(t, in, string(got[:n]))
	// The answers come in two writes, to cut a line in two where there is one.
	half := len(out) / 2
	for _, part := range []string{out[:half], out[half:]} {
		_, err = tr.Writer.Write([]byte(part))
		require.NoError(t, err)
	}
	select {
	case <-r.p.waitIdle():
		return true, buf.String()
	default:
		return false, buf.String()
	}
}

func TestStdioEndsOnlyWhenEveryRequestIsAnswered(t *testing.T) {
	for _, tc := range []struct {
		name, in, out string
		idle          bool
	}{
		{"no request", `{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n", "", true},
		{"answered", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}` + "\n", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", true},
		{"another spelling of the id", `{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n", true},
		{"a string id", `{"jsonrpc":"2.0","id":"a","method":"ping"}` + "\n", `{"jsonrpc":"2.0","id":"a","result":{}}` + "\n", true},
		{"cancelled by the client", `{"jsonrpc":"2.0","id":7,"method":"tools/call"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}` + "\n", "", true},
		{"unanswered", `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n", `{"jsonrpc":"2.0","id":3,"result":{}}` + "\n", false},
		{"a string is not the number", `{"jsonrpc":"2.0","id":"2","method":"tools/call"}` + "\n", `{"jsonrpc":"2.0","id":2,"result":{}}` + "\n", false},
		{"a notification is no answer", `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n", `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}` + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idle, written := stdioAfter(t, tc.in, tc.out)
			assert.Equal(t, tc.idle, idle)
			assert.Equal(t, tc.out, written, "the answers pass through unchanged")
		})
	}
}

func TestStdioEndWaitsForTheAnswer(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var buf bytes.Buffer
	tr := Stdio(ctx, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n"), &buf).(*sdk.IOTransport)
	done := make(chan error, 1)
	go func() {
		_, err := io.ReadAll(tr.Reader)
		done <- err
	}()
	// The end of input is held back until the answer is written...
	r := tr.Reader.(*drainReader)
	for {
		r.p.mu.Lock()
		n := len(r.p.ids)
		r.p.mu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	_, err := tr.Writer.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	require.NoError(t, err)
	// ...and then reported.
	require.NoError(t, <-done)
}

// FuzzStdioLines feeds arbitrary bytes to the transport's request bookkeeping: never a panic.
func FuzzStdioLines(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n"), []byte(`{"id":1,"result":{}}`+"\n"))
	f.Add([]byte(`{"id":[1],"method":"x"}`+"\n"+`{"id":{"a":1}}`), []byte(`{"id":null}`))
	f.Add([]byte("\n\n{"), []byte("}\n"))
	f.Fuzz(func(t *testing.T, in, out []byte) {
		p := &pending{ids: map[string]bool{}, idle: make(chan struct{})}
		close(p.idle)
		var l lines
		l.feed(in, func(b []byte) { p.line(b, false) })
		l = lines{}
		l.feed(out, func(b []byte) { p.line(b, true) })
		p.mu.Lock()
		empty := len(p.ids) == 0
		p.mu.Unlock()
		select {
		case <-p.waitIdle():
			if !empty {
				t.Fatal("idle with requests pending")
			}
		default:
			if empty {
				t.Fatal("waiting with nothing pending")
			}
		}
	})
}

// A line that is no message is answered with a JSON-RPC error and dropped, and the lines after
// it still reach the server: one over MaxLine too, which is read to its end and not kept.
func TestStdioAnswersLinesThatAreNoMessage(t *testing.T) {
	notification := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	huge := `{"jsonrpc":"2.0","method":"x","params":{"pad":"` + strings.Repeat("a", MaxLine) + `"}}`
	in := strings.Join([]string{"not json", "[]", `{"a":1}`, "   ", huge, notification}, "\n") + "\n"
	var buf bytes.Buffer
	tr := Stdio(context.Background(), strings.NewReader(in), &buf).(*sdk.IOTransport)
	got, err := io.ReadAll(tr.Reader)
	require.NoError(t, err)
	assert.Equal(t, notification+"\n", string(got), "only the message reaches the server")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 4, buf.String())
	assert.Contains(t, lines[0], `"code":-32700`)
	for _, l := range lines[1:] {
		assert.Contains(t, l, `"code":-32600`)
		assert.Contains(t, l, `"id":null`)
	}
	assert.Contains(t, lines[3], "a line over 16777216 bytes")
}
