package evals

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
)

// HostOutputLimit is the most a host turn may write before the capture stops.
const HostOutputLimit = 16 << 20

// HostCommand is the host agent's command line, split on whitespace with no shell.
type HostCommand struct {
	Argv []string
}

// DangerousHostError is a host command that would run without its permission checks.
type DangerousHostError struct{ Flag string }

func (e *DangerousHostError) Error() string {
	return fmt.Sprintf("refusing a host command with %s: arm H runs in a scratch directory but with your credentials, so it keeps its permission checks", e.Flag)
}

// Unwrap makes it a refusal before any request for engine.Classify: exit 1.
func (e *DangerousHostError) Unwrap() error { return &engine.RefusalError{Reason: e.Error()} }

// ParseHostCommand splits the command and refuses flags that turn permission checks off.
func ParseHostCommand(s string) (HostCommand, error) {
	argv := strings.Fields(s)
	if len(argv) == 0 {
		return HostCommand{}, errors.New("the host command is empty")
	}
	for i := range argv {
		if flag := permissionBypass(argv, i); flag != "" {
			return HostCommand{}, &DangerousHostError{Flag: flag}
		}
	}
	// The host runs in a scratch directory, so a program named by a relative path is resolved
	// against the directory locum runs in.
	if strings.Contains(argv[0], "/") && !filepath.IsAbs(argv[0]) {
		if abs, err := filepath.Abs(argv[0]); err == nil {
			argv[0] = abs
		}
	}
	return HostCommand{Argv: argv}, nil
}

// skipFlags turn a host's permission checks off, or let a later flag do so, in any spelling a
// flag parser accepts: bare, with "=value", or with a single dash.
var skipFlags = []string{"dangerously-skip-permissions", "allow-dangerously-skip-permissions"}

// permissionBypass names the flag at argv[i] if it turns permission checks off, or "".
func permissionBypass(argv []string, i int) string {
	name, value, hasValue := strings.Cut(strings.TrimLeft(argv[i], "-"), "=")
	if !strings.HasPrefix(argv[i], "-") {
		return ""
	}
	name = strings.ToLower(name)
	for _, f := range skipFlags {
		if name == f {
			return "--" + f
		}
	}
	if name != "permission-mode" {
		return ""
	}
	if !hasValue && i+1 < len(argv) {
		value = argv[i+1]
	}
	if strings.EqualFold(value, "bypassPermissions") {
		return "--permission-mode bypassPermissions"
	}
	return ""
}

// HostTurn is how one host turn ended.
type HostTurn struct {
	Output    string
	Exit      *int
	Completed bool
	Wall      time.Duration
	Detail    string
}

// ErrHostTooLarge stops a capture whose host wrote more than HostOutputLimit.
var ErrHostTooLarge = fmt.Errorf("the host wrote more than %d MiB in one turn; the capture stops (the turn runs again on resume)", HostOutputLimit>>20)

// Version runs the command with --version appended, so a wrapper such as env reports the host
// it runs.
func (h HostCommand) Version(ctx context.Context) (string, error) {
	t, err := h.run(ctx, "--version", time.Minute)
	if err != nil {
		return "", err
	}
	if !t.Completed {
		return "", fmt.Errorf("%s --version did not answer (%s)", strings.Join(h.Argv, " "), t.Detail)
	}
	line, _, _ := strings.Cut(strings.TrimSpace(t.Output), "\n")
	return strings.TrimSpace(line), nil
}

// Turn gives the host the prompt as its last argument, in a fresh empty directory removed
// afterwards, in a process group of its own. A turn that exits non-zero or runs out of time is
// an outcome (not completed); a signal or output over the limit is an error.
func (h HostCommand) Turn(ctx context.Context, prompt string, timeout time.Duration) (HostTurn, error) {
	return h.run(ctx, prompt, timeout)
}

func (h HostCommand) run(ctx context.Context, lastArg string, timeout time.Duration) (HostTurn, error) {
	dir, err := os.MkdirTemp("", "locum-host-")
	if err != nil {
		return HostTurn{}, err
	}
	defer os.RemoveAll(dir)
	hctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := &cappedBuffer{limit: HostOutputLimit, overflow: func() { cancel(ErrHostTooLarge) }}
	argv := append(append([]string(nil), h.Argv...), lastArg)
	res, err := rails.RunShell(hctx, rails.ShellCommand{Argv: argv, Dir: dir, Timeout: timeout, Stdout: out, TailBytes: 4096})
	if err != nil {
		return HostTurn{}, err
	}
	if errors.Is(context.Cause(hctx), ErrHostTooLarge) {
		return HostTurn{}, ErrHostTooLarge
	}
	if res.Canceled {
		return HostTurn{}, context.Cause(ctx)
	}
	t := HostTurn{Output: out.String(), Wall: res.Duration, Detail: res.Verdict()}
	if res.Exited {
		code := res.ExitCode
		t.Exit = &code
		t.Completed = code == 0
	}
	if !t.Completed && len(res.Output) > 0 {
		t.Detail += ": " + strings.TrimSpace(string(res.Output))
	}
	return t, nil
}

// cappedBuffer keeps what a host writes, up to a limit; past it, it calls overflow once and
// discards the rest, so the writer never blocks the host before it is stopped.
type cappedBuffer struct {
	mu       sync.Mutex
	buf      bytes.Buffer
	limit    int
	over     bool
	overflow func()
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over {
		return len(p), nil
	}
	if c.buf.Len()+len(p) > c.limit {
		c.over = true
		c.overflow()
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
