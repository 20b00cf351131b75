//go:build unix

package rails

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ShellCommand is a command line for bash -c, or, with Argv, a program and its arguments run
// with no shell.
type ShellCommand struct {
	Command string
	Argv    []string
	Dir     string
	Env     []string // nil: the current environment
	// Timeout ends the command (and its whole process group) after this long; 0 is none.
	Timeout time.Duration
	// TailBytes is how much of the combined output to keep, from the end; 0 keeps 4 KiB.
	TailBytes int
	// Grace is how long the group has after SIGTERM before SIGKILL; 0 is 1 second.
	Grace time.Duration
	// Stdout, when set, receives standard output (the tail then keeps standard error only).
	Stdout io.Writer
	// Sandbox, when set, contains the command (see Sandbox); nil runs it as it is.
	Sandbox *Sandbox
}

// outputDrain is how long output may still arrive after the command has exited or been stopped.
const outputDrain = 500 * time.Millisecond

// ShellResult is how a command ended. Exactly one of these holds: it exited (Exited, ExitCode),
// it was ended by a signal it did not expect (Signal), it ran out of time (TimedOut), or the
// caller's context ended first (Canceled).
type ShellResult struct {
	Exited   bool
	ExitCode int
	Signal   string
	TimedOut bool
	Canceled bool
	Output   []byte // the tail of stdout and stderr, interleaved as written
	Duration time.Duration
	// Sandbox is how the command was contained: SandboxBwrap, SandboxNone, or "" when no
	// sandbox was asked for.
	Sandbox string
	// SandboxWhy, when Sandbox is SandboxNone and the operator did not choose it, is why bwrap was
	// not in force.
	SandboxWhy string
}

// Verdict describes the result in a few words: "exit 1", "signal killed", "timed out after 10m".
func (r ShellResult) Verdict() string {
	switch {
	case r.Canceled:
		return "stopped"
	case r.TimedOut:
		return "timed out"
	case r.Signal != "":
		return "signal " + r.Signal
	default:
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
}

// RunShell runs c with bash -c in a process group of its own, stdin closed. When the context ends
// or the timeout passes, the whole group gets SIGTERM, then SIGKILL after the grace period; once
// the command is done, whatever it left running in its group is killed too. The error is for a
// command that could not start, a sandbox required and missing (*NoSandboxError), and a
// sandboxed command that made a git directory in its tree (*PlantedGitError, with the result).
func RunShell(ctx context.Context, c ShellCommand) (res ShellResult, err error) {
	tail := &TailBuffer{Max: c.TailBytes}
	if tail.Max == 0 {
		tail.Max = 4096
	}
	grace := c.Grace
	if grace == 0 {
		grace = time.Second
	}
	runCtx := ctx
	var cancel context.CancelFunc
	if c.Timeout > 0 {
		runCtx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	argv := []string{"bash", "-c", c.Command}
	if len(c.Argv) > 0 {
		argv = c.Argv
	}
	env := c.Env
	var box *contained
	if c.Sandbox != nil {
		dir := c.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		box, err = c.Sandbox.contain(argv, env, dir)
		if err != nil {
			return ShellResult{}, err
		}
		// Once every process the command started has ended, nothing can plant a git directory
		// after the look.
		defer func() {
			box.cleanup()
			if perr := box.planted(); perr != nil && err == nil {
				err = perr
			}
		}()
		argv, env = box.argv, box.env
	}
	newCmd := func(cgroup *verifyCgroup) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = c.Dir
		cmd.Env = env
		cmd.Stdout = tail
		if c.Stdout != nil {
			cmd.Stdout = c.Stdout
		}
		cmd.Stderr = tail
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if box != nil && box.kind == SandboxBwrap {
			// A session of its own: a group locum still signals, and no controlling terminal, so
			// the verify cannot push keystrokes into the operator's shell (TIOCSTI).
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		}
		cgroup.place(cmd.SysProcAttr)
		// A child that left the group (setsid) can hold the output pipe open for as long as it
		// likes; Wait would wait for it. The command's own exit, or its stop, is the verdict:
		// the pipe gets a short while after that to drain, then is closed.
		cmd.WaitDelay = outputDrain
		return cmd
	}
	var cgroup *verifyCgroup
	if box != nil {
		cgroup = box.cgroup
	}
	cmd := newCmd(cgroup)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		if cgroup == nil {
			return ShellResult{}, fmt.Errorf("starting %s: %w", c.describe(), err)
		}
		// The cgroup refused it (a threaded one, a kernel without clone3): the process group and
		// the marker do without.
		cgroup.kill()
		box.cgroup = nil
		cmd = newCmd(nil)
		if err := cmd.Start(); err != nil {
			return ShellResult{}, fmt.Errorf("starting %s: %w", c.describe(), err)
		}
	}
	pgid := cmd.Process.Pid
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
		case <-runCtx.Done():
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(grace):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
	}()
	werr := cmd.Wait()
	if errors.Is(werr, exec.ErrWaitDelay) {
		werr = nil // it exited 0; only its leftover child kept the pipe
	}
	close(done)
	<-stopped
	// Children that outlive the shell would keep the file or the port the next attempt needs.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	res = ShellResult{Output: tail.Bytes(), Duration: time.Since(start)}
	if box != nil {
		res.Sandbox, res.SandboxWhy = box.kind, box.why
	}
	switch {
	case ctx.Err() != nil:
		res.Canceled = true
	case runCtx.Err() != nil:
		res.TimedOut = true
	default:
		var exit *exec.ExitError
		if werr != nil && !errors.As(werr, &exit) {
			return res, fmt.Errorf("waiting for %s: %w", c.describe(), werr)
		}
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			res.Signal = ws.Signal().String()
		} else {
			res.Exited = true
			res.ExitCode = cmd.ProcessState.ExitCode()
		}
	}
	return res, nil
}

func (c ShellCommand) describe() string {
	if len(c.Argv) > 0 {
		return strconv.Quote(strings.Join(c.Argv, " "))
	}
	return fmt.Sprintf("bash -c %q", c.Command)
}

// TailBuffer keeps the last Max bytes written to it. It is safe for concurrent writers.
type TailBuffer struct {
	Max int
	mu  sync.Mutex
	buf []byte
}

func (t *TailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.Max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// Bytes returns a copy of what is kept.
func (t *TailBuffer) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]byte(nil), t.buf...)
}
