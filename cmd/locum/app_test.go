package main

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Standard output is buffered, yet a message on standard error never overtakes what was printed
// to standard output before it: the order a terminal shows is the order of the calls.
func TestStderrFlushesStdoutFirst(t *testing.T) {
	name := filepath.Join(t.TempDir(), "terminal")
	open := func() *os.File {
		f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	stdout := bufio.NewWriter(open())
	stderr := &stderrAfterStdout{stdout: stdout, file: open()}
	_, _ = stdout.WriteString("pair 1\n")
	_, _ = stdout.WriteString("pair 2\n")
	data, _ := os.ReadFile(name)
	assert.Empty(t, data, "stdout is buffered")
	_, _ = stderr.Write([]byte("receipt\n"))
	_, _ = stdout.WriteString("after\n")
	require.NoError(t, stdout.Flush())
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, "pair 1\npair 2\nreceipt\nafter\n", string(data))
}

// A command that talks over standard output (the MCP server) gets each write through at once.
func TestUnbufferedFlushesEachWrite(t *testing.T) {
	name := filepath.Join(t.TempDir(), "pipe")
	f, err := os.Create(name)
	require.NoError(t, err)
	defer f.Close()
	e := &env{stdout: bufio.NewWriter(f)}
	_, err = e.unbuffered().Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"))
	require.NoError(t, err)
	data, err := os.ReadFile(name)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":1,"result":{}}`+"\n", string(data))
}
