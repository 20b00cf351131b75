//go:build unix

package rails

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunShellOutcomes(t *testing.T) {
	cases := []struct {
		name    string
		command string
		check   func(t *testing.T, r ShellResult)
	}{
		{"exit 0", "echo hi", func(t *testing.T, r ShellResult) {
			assert.True(t, r.Exited)
			assert.Equal(t, 0, r.ExitCode)
			assert.Equal(t, "hi\n", string(r.Output))
		}},
		{"exit 3 with stderr", "echo oops >&2; exit 3", func(t *testing.T, r ShellResult) {
			assert.Equal(t, 3, r.ExitCode)
			assert.Equal(t, "exit 3", r.Verdict())
			assert.Contains(t, string(r.Output), "oops")
		}},
		{"missing command", "no-such-command-locum", func(t *testing.T, r ShellResult) {
			assert.Equal(t, 127, r.ExitCode)
		}},
		{"signal", "kill -9 $$", func(t *testing.T, r ShellResult) {
			assert.False(t, r.Exited)
			assert.Equal(t, "killed", r.Signal)
		}},
		{"stdin closed", "cat; echo done", func(t *testing.T, r ShellResult) {
			assert.Equal(t, "done\n", string(r.Output))
		}},
		{"tail kept", "head -c 10000 /dev/zero | tr '\\0' a; echo END", func(t *testing.T, r ShellResult) {
			assert.Len(t, r.Output, 4096)
			assert.True(t, strings.HasSuffix(string(r.Output), "aEND\n"))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := RunShell(context.Background(), ShellCommand{Command: tc.command, Dir: t.TempDir()})
			require.NoError(t, err)
			tc.check(t, r)
		})
	}
}

// hangDeadline bounds a test's wait on another process: only a hang reaches it.
const hangDeadline = time.Minute

// A command that ignores SIGTERM and leaves a child behind is still stopped, child and all. A
// machine so loaded that the shell had not started its child before the timeout tries again
// with a longer one: the timeout is what is tested, never how fast the shell starts.
func TestRunShellTimeoutStopsTheWholeGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	// The trap comes first, so the child inherits the ignored SIGTERM too: only the escalation to
	// SIGKILL after the grace can end either of them.
	cmd := "trap '' TERM; sleep 60 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; wait"
	const grace = 200 * time.Millisecond
	for timeout := 300 * time.Millisecond; ; timeout *= 2 {
		start := time.Now()
		r, err := RunShell(context.Background(), ShellCommand{Command: cmd, Dir: dir, Timeout: timeout, Grace: grace})
		require.NoError(t, err)
		assert.True(t, r.TimedOut)
		assert.Equal(t, "timed out", r.Verdict())
		assert.GreaterOrEqual(t, time.Since(start), timeout+grace, "SIGTERM alone ended a group that ignores it")
		if _, err := os.Stat(pidFile); err == nil {
			assertGone(t, pidFile)
			return
		}
		require.Less(t, timeout, hangDeadline, "the shell never started its child")
	}
}

// waitForFile waits for a file to appear, failing the test only at hangDeadline.
func waitForFile(t *testing.T, file string) {
	t.Helper()
	deadline := time.Now().Add(hangDeadline)
	for {
		if _, err := os.Stat(file); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s did not appear", file)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRunShellCancelStopsTheGroup(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitForFile(t, pidFile)
		cancel()
	}()
	r, err := RunShell(ctx, ShellCommand{Command: "sleep 60 & echo $! > " + pidFile + ".tmp; mv " + pidFile + ".tmp " + pidFile + "; wait", Dir: dir})
	require.NoError(t, err)
	assert.True(t, r.Canceled)
	assertGone(t, pidFile)
}

func assertGone(t *testing.T, pidFile string) {
	t.Helper()
	data, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	var pid int
	for _, c := range strings.TrimSpace(string(data)) {
		pid = pid*10 + int(c-'0')
	}
	require.Positive(t, pid)
	// The child may linger as a zombie for an instant until its reaper collects it.
	deadline := time.Now().Add(hangDeadline)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(pid, 0); err != nil {
			return
		}
		if stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(data)) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("child %d still running", pid)
}

// A detached child that keeps the output pipe open must not keep the verdict waiting: before
// WaitDelay, Wait waited for the pipe, so this ran into the timeout (or forever without one).
func TestRunShellDoesNotWaitForADetachedChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	for _, tc := range []struct {
		command string
		code    int
	}{
		{"setsid sleep 60 & echo $! > " + pidFile + "; echo verdict; exit 1", 1},
		{"setsid sleep 60 & echo $! > " + pidFile + "; exit 0", 0},
	} {
		res, err := RunShell(context.Background(), ShellCommand{Command: tc.command, Timeout: 30 * time.Second})
		require.NoError(t, err)
		assert.False(t, res.TimedOut, "the run waited for the detached child until its timeout")
		assert.True(t, res.Exited)
		assert.Equal(t, tc.code, res.ExitCode)
		if data, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	}
}

func TestRunShellStopsWithADetachedChildOnCancel(t *testing.T) {
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan ShellResult, 1)
	go func() {
		res, _ := RunShell(ctx, ShellCommand{Command: "setsid sleep 60 & echo $! > " + ready + ".tmp; mv " + ready + ".tmp " + ready + "; sleep 60"})
		done <- res
	}()
	waitForFile(t, ready)
	cancel()
	res := <-done
	assert.True(t, res.Canceled)
	data, _ := os.ReadFile(ready)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}
