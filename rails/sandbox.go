//go:build unix

package rails

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Sandbox is how a command locum runs on the model's behalf (a verify, which runs code the model
// may have written) is contained. With bubblewrap (bwrap) it runs in new PID, network, IPC and
// UTS namespaces: every descendant dies with the command, setsid or not; the network is its own
// loopback only, unless Network; the file system is read-only but for Writable, a scratch HOME
// and TMPDIR, and a fresh /tmp. Without bwrap it runs as before, in a process group, and every
// process that still carries its marker in its environment is killed when it ends.
type Sandbox struct {
	// Writable are the paths the command may write: the tree it works in, and caches.
	Writable []string
	// ReadOnly are paths inside Writable that stay read-only (a repository's .git).
	ReadOnly []string
	// Network keeps the host's network (the operator's --verify-network).
	Network bool
	// KeepHome leaves HOME as it is, read-only, rather than a scratch one (--verify-home).
	KeepHome bool
	// Require refuses to run without a sandbox (the operator's --sandbox require).
	Require bool
	// Off runs the command in a process group only, its marked descendants killed when it ends
	// (the operator's --sandbox none).
	Off bool
}

// The ways a command was contained, as the receipt names them.
const (
	SandboxBwrap = "bwrap"
	SandboxNone  = "none"
)

// NoSandboxError is a command the operator requires a sandbox for, where none is available.
type NoSandboxError struct{ Why string }

func (e *NoSandboxError) Error() string {
	return "the operator requires a sandbox for the verify (sandbox require), and none is available: " + e.Why +
		"; install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) where user namespaces are allowed"
}

// bwrapProbe is whether bwrap runs here, asked once: installed, and allowed to make the
// namespaces (a container may forbid them).
var bwrapProbe = sync.OnceValues(func() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("bwrap is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--unshare-pid", "--unshare-net", "--die-with-parent",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "true").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("bwrap cannot make its namespaces here (%s)", strings.TrimSpace(firstLine(out, err)))
	}
	return path, nil
})

func firstLine(out []byte, err error) string {
	if line, _, _ := bytes.Cut(bytes.TrimSpace(out), []byte("\n")); len(line) > 0 {
		return string(line)
	}
	return err.Error()
}

// SandboxAvailable says whether commands can be contained here, and if not, why.
func SandboxAvailable() (bool, string) {
	if _, err := bwrapProbe(); err != nil {
		return false, err.Error()
	}
	return true, ""
}

// contained is a command prepared to run in its sandbox: the argv to start, the environment, and
// what to undo after.
type contained struct {
	argv    []string
	env     []string
	kind    string
	marker  string
	scratch string
}

// markerVar carries a random value in the environment of every process a command starts, so that
// without a PID namespace its descendants can still be found after it ends.
const markerVar = "LOCUM_VERIFY_RUN"

// contain builds the command's argv and environment under sb.
func (sb *Sandbox) contain(argv, env []string, dir string) (*contained, error) {
	if env == nil {
		env = os.Environ()
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	c := &contained{argv: argv, marker: hex.EncodeToString(id)}
	c.env = append(append([]string(nil), env...), markerVar+"="+c.marker)
	if sb.Off {
		c.kind = SandboxNone
		return c, nil
	}
	bwrap, err := bwrapProbe()
	if err != nil {
		if sb.Require {
			return nil, &NoSandboxError{Why: err.Error()}
		}
		c.kind = SandboxNone
		return c, nil
	}
	c.kind = SandboxBwrap
	c.scratch, err = os.MkdirTemp("", "locum-verify-")
	if err != nil {
		return nil, fmt.Errorf("the verify's scratch directory: %w", err)
	}
	home, tmp := filepath.Join(c.scratch, "home"), filepath.Join(c.scratch, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(c.scratch)
			return nil, fmt.Errorf("the verify's scratch directory: %w", err)
		}
	}
	// No --new-session: the command stays in the process group locum signals, so a test runner
	// inside gets its SIGTERM and the grace to clean up before the SIGKILL.
	args := []string{bwrap, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if !sb.Network {
		args = append(args, "--unshare-net")
	}
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
		"--bind", c.scratch, c.scratch)
	caches := toolCaches(env, sb.Network)
	for _, p := range caches.writable {
		// The tool would make its cache on first use; in the sandbox it could not.
		_ = os.MkdirAll(p, 0o755)
	}
	for _, p := range append(append([]string(nil), sb.Writable...), caches.writable...) {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				args = append(args, "--bind", abs, abs)
			}
		}
	}
	for _, p := range sb.ReadOnly {
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				args = append(args, "--ro-bind", abs, abs)
			}
		}
	}
	args = append(args, "--chdir", dir)
	// HOME and TMPDIR are the scratch directory's; the tool caches keep the paths they had, so
	// a build or a test inside reuses what the operator's machine already built.
	if !sb.KeepHome {
		c.env = setEnv(c.env, "HOME", home)
	}
	c.env = setEnv(c.env, "TMPDIR", tmp)
	for _, kv := range caches.env {
		k, v, _ := strings.Cut(kv, "=")
		c.env = setEnv(c.env, k, v)
	}
	c.argv = append(append(args, "--"), argv...)
	return c, nil
}

// toolCaches are the build caches a verify reuses, found as the operator's environment or the
// tool's own default would place them under the real HOME: Go's build cache is writable (a test
// run writes to it), its module cache only with the network (a download writes there).
type cachePaths struct {
	writable []string
	env      []string
}

func toolCaches(env []string, network bool) cachePaths {
	get := func(k string) string {
		for i := len(env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	home := get("HOME")
	var out cachePaths
	gocache := get("GOCACHE")
	if gocache == "" {
		base := get("XDG_CACHE_HOME")
		if base == "" && home != "" {
			base = filepath.Join(home, ".cache")
		}
		if base != "" {
			gocache = filepath.Join(base, "go-build")
		}
	}
	if gocache != "" && gocache != "off" {
		out.writable = append(out.writable, gocache)
		out.env = append(out.env, "GOCACHE="+gocache)
	}
	gopath := get("GOPATH")
	if gopath == "" && home != "" {
		gopath = filepath.Join(home, "go")
	}
	if gopath != "" {
		out.env = append(out.env, "GOPATH="+gopath)
		modcache := get("GOMODCACHE")
		if modcache == "" {
			modcache = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
		}
		out.env = append(out.env, "GOMODCACHE="+modcache)
		if network {
			out.writable = append(out.writable, modcache)
		}
	}
	return out
}

func setEnv(env []string, key, value string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// cleanup ends what the command left behind and removes its scratch directory. Without a PID
// namespace, every process whose environment carries the command's marker is killed, until none
// is left: a child that left the process group (setsid) is found that way too.
func (c *contained) cleanup() {
	if c.kind == SandboxNone {
		killMarked(c.marker)
	}
	if c.scratch != "" {
		os.RemoveAll(c.scratch)
	}
}

// killMarked kills every process of this user whose environment holds markerVar=marker, a few
// rounds over, since one may fork while the others die.
func killMarked(marker string) {
	needle := []byte(markerVar + "=" + marker + "\x00")
	self := os.Getpid()
	for range 5 {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := 0
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self {
				continue
			}
			data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
			if err != nil || !bytes.Contains(append(data, 0), needle) {
				continue
			}
			found++
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if found == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
