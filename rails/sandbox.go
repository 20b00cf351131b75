//go:build unix

package rails

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// Sandbox is how a command locum runs on the model's behalf (a verify, which runs code the model
// may have written) is contained. With bubblewrap (bwrap) it runs in new PID, network, IPC and
// UTS namespaces (and a user namespace where the kernel allows one) with no capabilities: every
// descendant dies with the command, setsid or not; the network is its own loopback only, unless
// Network; the file system is read-only but for Writable (every git directory in it read-only
// still), a scratch HOME and TMPDIR, a fresh /tmp and the repository's own Go caches, and
// locum's own files are out of sight. Without bwrap it runs in a process group (and a cgroup of
// its own where one may be made), and every process it left is frozen, then killed, when it
// ends. Either way a git directory the command made in a tree is removed and makes its
// verdict an error (*PlantedGitError); so, in the sandbox, does a symbolic link from a tree into
// a directory it could write outside it, and an entry in its Go caches Go does not make. A tree
// locum cannot read to its end is not run in (*UnreadableTreeError, *TreeTooLargeError).
type Sandbox struct {
	// Writable are the trees the command may write: the one it works in.
	Writable []string
	// Caches are more directories it may write, the operator's; one inside a tree is not bound
	// again, so a link the tree holds cannot widen it.
	Caches []string
	// GoCaches is the directory of the command's own Go caches (a build cache, and a module
	// cache under Network): the repository's, see RepoCacheDir. "" leaves Go its default, under
	// the scratch HOME.
	GoCaches string
	// Hidden are the operator's directories the command may not even read, each covered by an
	// empty file system (locum's state directory, with its keys, and its cache directory, with
	// every other repository's verify caches, and its config directory); GoCaches is bound again
	// inside.
	Hidden []string
	// HiddenFiles are the operator's files the command may not read wherever they are (the key
	// that signs routing), each covered by an empty one.
	HiddenFiles []string
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
		"; the sandbox is bubblewrap (Debian and Ubuntu: apt-get install bubblewrap), where it may make its namespaces and drop every capability"
}

// bwrapInfo is how bubblewrap runs here: its path, whether it may make a user namespace, and the
// entries of /proc to keep read-only.
type bwrapInfo struct {
	path   string
	userns bool
	procRO []string
}

// bwrapProbe is whether bwrap contains a command here, asked once by running the sandbox's own
// argv shape: installed, allowed to make the namespaces (a container may forbid them), leaving
// the command no capability, no kernel setting it could write, and no user namespace it could
// make. Where it would leave any of them, the sandbox is not in force.
var bwrapProbe = sync.OnceValues(probeBwrap)

// probeScript prints what the probe reads: the capabilities of the sandboxed command
// (/proc/self/status), a line if it could make a user namespace of its own (where unshare is
// installed to try; bwrap tries too, see base), then a line for each of its arguments it may
// open for writing. Opening writes nothing; the subshell keeps a failed redirection from ending
// sh.
const probeScript = `cat /proc/self/status || exit 1
if command -v unshare >/dev/null 2>&1 && unshare -U true 2>/dev/null; then echo "` + probeUserns + `"; fi
for f do
	if [ -e "$f" ] && (: >>"$f") 2>/dev/null; then echo "` + probeWritable + ` $f"; fi
done`

const (
	probeWritable = "locum-probe-writable:"
	probeUserns   = "locum-probe-userns"
)

// probeFiles are the host-global files the probe tries to open for writing in the sandbox, where
// they exist: two kernel settings (sysctls) and the magic SysRq trigger, and each of procRO's
// files with a write bit.
var probeFiles = []string{"/proc/sys/kernel/printk_ratelimit_burst", "/proc/sys/kernel/core_pattern", "/proc/sysrq-trigger"}

func probeBwrap() (bwrapInfo, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return bwrapInfo{}, errors.New("bwrap is not installed")
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		return bwrapInfo{}, errors.New("sh is not installed, so what bwrap leaves a command cannot be checked")
	}
	procRO := procReadOnly("/proc")
	files := slices.Clone(probeFiles)
	for _, p := range procRO {
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o222 != 0 && !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A user namespace first; without one, the capabilities dropped are still enough. Where
	// neither contains the command, both reasons are given: the first is usually the one to fix.
	var whys []error
	for _, userns := range []bool{true, false} {
		b := bwrapInfo{path: path, userns: userns, procRO: procRO}
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, path, append(append(b.base(false)[1:], "--", sh, "-c", probeScript, "sh"), files...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil {
			err = errors.Join(capsDropped(out), noUserns(out), nothingWritable(out))
		} else {
			err = bwrapFailed(stderr.Bytes(), err)
		}
		if err == nil {
			return b, nil
		}
		whys = append(whys, err)
	}
	return bwrapInfo{}, fmt.Errorf("with a user namespace of its own, %w; without one, %w", whys[0], whys[1])
}

// procReadOnly are the entries of proc (the host's /proc) to bind read-only over the sandbox's
// own: every one that is not a process's own (a PID, self, thread-self, and the links into self
// such as net and mounts), whatever its type and mode. They are the kernel's, shared with every
// process of the host: /proc/sys (sysctls such as kernel.core_pattern, which names a program the
// kernel runs as root in the host's namespaces), /proc/sysrq-trigger (which reboots or crashes
// the machine), /proc/irq, /proc/bus, /proc/fs, /proc/acpi and the like. Owner uid 0 writes most
// of them with no capability at all, so dropping every capability leaves them to a root caller;
// bubblewrap makes some read-only itself but not /proc/sys, whose top directory only looks
// read-only. Docker makes /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus and /proc/fs
// read-only; this covers those and whatever else this kernel offers. An entry the host masked
// (a container runtime binds /dev/null over /proc/kcore, an empty directory over /proc/acpi)
// is bound as the host shows it: the sandbox's fresh /proc would otherwise show the real one.
func procReadOnly(proc string) []string {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return []string{filepath.Join(proc, "sys"), filepath.Join(proc, "sysrq-trigger")}
	}
	var out []string
	for _, e := range entries {
		name := e.Name()
		if name == "self" || name == "thread-self" || strings.Trim(name, "0123456789") == "" || e.Type() == fs.ModeSymlink {
			continue
		}
		out = append(out, filepath.Join(proc, name))
	}
	return out
}

// base is the argv every sandboxed command starts with, the probe's included: the namespaces,
// no capabilities, the root read-only, /proc's host-global entries read-only, and /tmp, /run,
// /var/run and /var/tmp empty.
//
// bubblewrap keeps a root caller's capabilities unless told otherwise, and with them a verify
// could remount / read-write, unmount its /proc to see the host's, or join the host's network
// namespace with setns. --cap-drop ALL takes them all, for every caller. --unshare-user, where
// the kernel lets bwrap make a user namespace, also empties the bounding set, and makes the
// verify's uid 0 the root of a namespace that owns nothing of the host's; a tree's files still
// belong to the operator inside (the caller's uid maps to itself), so go test writes the tree
// and its cache as before. Where no user namespace may be made, no_new_privs (which bwrap always
// sets) keeps an exec from regaining what was dropped.
//
// A user namespace of the verify's own would give it every capability back over namespaces of
// its own: a mount namespace where it mounts the cgroup file system and, where cgroup2 is not
// mounted with nsdelegate, writes the cgroup locum runs in (cgroup.kill ends locum and every
// process beside it; cgroup.freeze stops locum past any timeout). --disable-userns makes the
// sandbox's user namespace one that can hold no other; without --unshare-user,
// --assert-userns-disabled makes bwrap refuse to run where one could be made. Either way bwrap
// tries to make one before it runs the command and fails where it can.
//
// With no capability, uid 0 still owns the kernel's files in /proc, and writes them by their
// mode alone (a sysctl is checked against the global uid 0, whatever the namespace): those are
// bound read-only over the sandbox's /proc (see procReadOnly). Each is bound from the host's
// /proc; what a sysctl shows follows the namespaces of the process reading it, so the network
// settings are still the sandbox's own.
func (b bwrapInfo) base(network bool) []string {
	args := []string{b.path, "--die-with-parent", "--unshare-pid", "--unshare-ipc", "--unshare-uts"}
	if b.userns {
		args = append(args, "--unshare-user", "--disable-userns")
	} else {
		args = append(args, "--assert-userns-disabled")
	}
	args = append(args, "--cap-drop", "ALL")
	if !network {
		args = append(args, "--unshare-net")
	}
	// The root read-only; /tmp, and /run where the sockets of the session bus, systemd, Docker
	// and the like live, empty: a Unix socket on a read-only file system still connects.
	args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc")
	for _, p := range b.procRO {
		args = append(args, "--ro-bind-try", p, p)
	}
	args = append(args, "--tmpfs", "/tmp")
	for _, d := range []string{"/run", "/var/run", "/var/tmp"} {
		if st, err := os.Lstat(d); err == nil && st.IsDir() {
			args = append(args, "--tmpfs", d)
		}
	}
	return args
}

// bwrapFailed is why the probe's bwrap did not run its command: where it says a user namespace
// could still be made (its own check, see base) or does not know the option that forbids them,
// that; otherwise the namespaces themselves.
func bwrapFailed(stderr []byte, err error) error {
	line := strings.TrimSpace(firstLine(stderr, err))
	switch {
	case strings.Contains(line, "user namespaces was not disabled"):
		return fmt.Errorf("bwrap's sandbox lets the command make a user namespace of its own here (%s), with which it could mount the cgroup file system and kill or freeze locum's cgroup", line)
	case strings.Contains(line, "Unknown option") && (strings.Contains(line, "userns") || strings.Contains(line, "--disable") || strings.Contains(line, "--assert")):
		return fmt.Errorf("this bwrap cannot keep the sandboxed command from making user namespaces (%s); bubblewrap 0.8.0 or later can", line)
	}
	return fmt.Errorf("bwrap cannot make its namespaces here (%s)", line)
}

// noUserns reads the probe's line of a user namespace the sandboxed command made: in one of its
// own it holds every capability again, over namespaces of its own, and with them it could mount
// the cgroup file system and write the cgroup locum runs in (cgroup.kill, cgroup.freeze).
func noUserns(out []byte) error {
	for line := range strings.SplitSeq(string(out), "\n") {
		if line == probeUserns {
			return errors.New("bwrap's sandbox lets the command make a user namespace of its own here, with which it could mount the cgroup file system and kill or freeze locum's cgroup")
		}
	}
	return nil
}

// nothingWritable reads the probe's lines of the host-global files the sandboxed command could
// open for writing: any one is a way out.
func nothingWritable(out []byte) error {
	var writable []string
	for line := range strings.SplitSeq(string(out), "\n") {
		if p, ok := strings.CutPrefix(line, probeWritable+" "); ok {
			writable = append(writable, p)
		}
	}
	if len(writable) > 0 {
		return fmt.Errorf("bwrap's sandbox lets the command write the host's kernel settings here (%s), so it could leave the sandbox", strings.Join(writable, ", "))
	}
	return nil
}

// capsDropped reads /proc/self/status as a sandboxed command saw it: no capability it holds or
// may pass on, and none an exec could regain (an empty bounding set, or no_new_privs).
func capsDropped(status []byte) error {
	fields := map[string]string{}
	for line := range strings.SplitSeq(string(status), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			fields[k] = strings.TrimSpace(v)
		}
	}
	hex := func(k string) (uint64, bool) {
		v, err := strconv.ParseUint(fields[k], 16, 64)
		return v, err == nil
	}
	for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
		v, ok := hex(k)
		if !ok {
			return fmt.Errorf("bwrap's sandbox does not show its capabilities (%s), so none can be shown dropped", k)
		}
		if v != 0 {
			return fmt.Errorf("bwrap leaves the sandboxed command capabilities here (%s %016x), so it could leave the sandbox", k, v)
		}
	}
	if bnd, ok := hex("CapBnd"); (!ok || bnd != 0) && fields["NoNewPrivs"] != "1" {
		return fmt.Errorf("bwrap's sandbox could regain capabilities here (CapBnd %s without no_new_privs)", fields["CapBnd"])
	}
	return nil
}

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
// what to undo and check after.
type contained struct {
	argv []string
	env  []string
	kind string
	// why is, when kind is SandboxNone though the operator did not ask for none, why bwrap was not
	// in force.
	why     string
	marker  string
	scratch string
	// cgroup, without bwrap, holds every process the command starts, where one could be made.
	cgroup *verifyCgroup
	// git is each tree's git directories before the command ran.
	git []*gitScan
	// fence are the directories outside the trees the command may write (its caches and
	// scratch directory), real paths: a link from a tree into one is removed after it.
	fence []string
	// goCaches, when set, are the command's Go caches (see RepoCacheDir), checked after it;
	// network says it could fill the module cache.
	goCaches string
	network  bool
}

// markerVar carries a marker in the environment of every process a command starts, so that
// without a PID namespace its descendants can still be found after it ends, and after the locum
// that started it was killed (see newMarker).
const markerVar = "LOCUM_VERIFY_RUN"

// contain builds the command's argv and environment under sb.
func (sb *Sandbox) contain(argv, env []string, dir string) (*contained, error) {
	if env == nil {
		env = os.Environ()
	}
	c := &contained{argv: argv, marker: newMarker()}
	c.env = append(append([]string(nil), env...), markerVar+"="+c.marker)
	var trees []string
	for _, p := range sb.Writable {
		if real, ok := realDir(p); ok {
			trees = append(trees, real)
		}
	}
	var bwrap bwrapInfo
	var noBwrap error
	if !sb.Off {
		bwrap, noBwrap = bwrapProbe()
		switch {
		case noBwrap != nil && sb.Require:
			return nil, &NoSandboxError{Why: noBwrap.Error()}
		case noBwrap != nil:
			c.why = noBwrap.Error()
		}
	}
	// Git obeys what a git directory holds (hooks, fsmonitor, filters) when the operator next
	// runs it there: each tree's are found before the command runs, kept read-only in the
	// sandbox, and any it made are removed after.
	for _, t := range trees {
		scan, err := scanGit(t)
		if err != nil {
			return nil, err
		}
		c.git = append(c.git, scan)
	}
	if sb.Off || noBwrap != nil {
		c.kind = SandboxNone
		c.cgroup = newCgroup(c.marker)
		return c, nil
	}
	c.kind = SandboxBwrap
	var err error
	c.scratch, err = os.MkdirTemp("", "locum-verify-")
	if err != nil {
		return nil, fmt.Errorf("the verify's scratch directory: %w", err)
	}
	if real, ok := realDir(c.scratch); ok {
		c.fence = append(c.fence, real)
	}
	home, tmp := filepath.Join(c.scratch, "home"), filepath.Join(c.scratch, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			os.RemoveAll(c.scratch)
			return nil, fmt.Errorf("the verify's scratch directory: %w", err)
		}
	}
	args := bwrap.base(sb.Network)
	// Each mount is made after every one it lies inside: a tree inside a hidden directory
	// shows, a hidden directory inside a tree stays hidden, and a git directory inside a tree
	// stays read-only.
	var mounts []mount
	mounts = append(mounts, mount{op: "--bind", path: c.scratch})
	for _, t := range trees {
		mounts = append(mounts, mount{op: "--bind", path: t})
	}
	var hidden []string
	for _, p := range sb.Hidden {
		if real, ok := realDir(p); ok {
			hidden = append(hidden, real)
			mounts = append(mounts, mount{op: "--tmpfs", path: real})
		}
	}
	for _, p := range sb.HiddenFiles {
		// A file in a hidden directory is out of sight already; a mount would show its name.
		if real, ok := realFile(p); ok && !slices.ContainsFunc(hidden, func(h string) bool { return untrusted.Inside(h, real) }) {
			mounts = append(mounts, mount{op: "--ro-bind", path: real, src: os.DevNull})
		}
	}
	caches := toolCaches(sb.GoCaches, sb.Network)
	for _, p := range caches.writable {
		// The tool would make its cache on first use; in the sandbox it could not.
		_ = os.MkdirAll(p, 0o700)
	}
	if len(caches.writable) > 0 {
		pruneRepoCaches(sb.GoCaches, time.Now())
		if real, ok := realDir(sb.GoCaches); ok {
			c.fence = append(c.fence, real)
			c.goCaches, c.network = real, sb.Network
		}
	}
	// A cache is bound only by its real path and only outside the trees: a symbolic link the
	// tree holds could otherwise make its target writable.
	for _, p := range append(append([]string(nil), sb.Caches...), caches.writable...) {
		real, ok := realDir(p)
		if !ok || slices.ContainsFunc(trees, func(t string) bool { return untrusted.Inside(t, real) }) {
			continue
		}
		mounts = append(mounts, mount{op: "--bind", path: real})
		c.fence = append(c.fence, real)
	}
	for _, scan := range c.git {
		for _, p := range scan.readOnly(trees) {
			mounts = append(mounts, mount{op: "--ro-bind", path: p})
		}
	}
	slices.SortStableFunc(mounts, func(a, b mount) int { return depth(a.path) - depth(b.path) })
	for _, m := range mounts {
		switch {
		case m.op == "--tmpfs":
			args = append(args, m.op, m.path)
		case m.src != "":
			args = append(args, m.op, m.src, m.path)
		default:
			args = append(args, m.op, m.path, m.path)
		}
	}
	args = append(args, "--chdir", dir)
	// HOME and TMPDIR are the scratch directory's; the variables that name the operator's
	// sockets and display go, so the verify cannot reach the session bus, the SSH or GPG agent,
	// or a window system by them.
	if !sb.KeepHome {
		c.env = setEnv(c.env, "HOME", home)
	}
	c.env = setEnv(c.env, "TMPDIR", tmp)
	for _, k := range sessionVars {
		c.env = unsetEnv(c.env, k)
	}
	for _, kv := range caches.env {
		k, v, _ := strings.Cut(kv, "=")
		c.env = setEnv(c.env, k, v)
	}
	c.argv = append(append(args, "--"), argv...)
	return c, nil
}

// mount is one of bwrap's mounts of a path onto itself (--bind, --ro-bind), of src onto it, or
// over it (--tmpfs).
type mount struct{ op, path, src string }

func depth(p string) int { return strings.Count(filepath.Clean(p), string(filepath.Separator)) }

// RepoCacheDir is the directory of the verify caches of the repository at root, under the
// operator's cache directory: each repository has its own, which its worktrees (a workflow's
// items, the agent's) share, and no verify reaches another's. Go trusts what its caches hold,
// so a cache two repositories shared would let a verify in one plant what the other links into
// its tests. The key is the root's real path with its device, inode and birth time, which a
// repository cannot choose: another repository cloned to the same path later gets a cache of its
// own (where the file system keeps birth times; elsewhere only if its inode differs).
func RepoCacheDir(cacheDir, root string) (string, error) {
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("the repository's verify cache: %w", err)
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return "", fmt.Errorf("the repository's verify cache: %w", err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(real, &st); err != nil {
		return "", fmt.Errorf("the repository's verify cache: %w", err)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d\x00%s", real, st.Dev, st.Ino, birthTime(real)))
	return filepath.Join(cacheDir, "verify-go", hex.EncodeToString(sum[:12])), nil
}

// repoCacheAge is how long a repository's verify caches are kept unused: each repository has its
// own, and one cloned once and never verified again would otherwise stay for good.
const repoCacheAge = 30 * 24 * time.Hour

// pruneRepoCaches marks the repository's caches (own) used now, and removes those of the other
// repositories beside it that were not used for repoCacheAge.
func pruneRepoCaches(own string, now time.Time) {
	_ = os.Chtimes(own, now, now)
	parent := filepath.Dir(own)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Name() == filepath.Base(own) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > repoCacheAge {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// cachePaths are the tool caches a sandboxed verify writes, and the variables that point the
// tools at them.
type cachePaths struct {
	writable []string
	env      []string
}

// toolCaches gives the verify Go caches of its own in dir (the repository's, RepoCacheDir): a
// build cache, and a module cache the network fills. Never the operator's own: Go trusts what
// its caches hold, and an entry a verify wrote there would be linked into the operator's next
// build. The operator's module cache stays readable, so a module already downloaded builds
// without the network.
func toolCaches(dir string, network bool) cachePaths {
	if !filepath.IsAbs(dir) {
		return cachePaths{}
	}
	out := cachePaths{writable: []string{filepath.Join(dir, "build")}, env: []string{"GOCACHE=" + filepath.Join(dir, "build")}}
	if network {
		// A download writes the module cache: the verify's own, so nothing it fetched lands in
		// the operator's.
		out.writable = append(out.writable, filepath.Join(dir, "mod"))
		out.env = append(out.env, "GOMODCACHE="+filepath.Join(dir, "mod"), "GOFLAGS=-modcacherw")
	}
	return out
}

// sessionVars name the operator's sockets and display, which a verify has no business reaching.
var sessionVars = []string{"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "XAUTHORITY", "DOCKER_HOST", "CONTAINER_HOST"}

// realDir is p made absolute with its symbolic links resolved, when it is a directory.
func realDir(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", false
	}
	return real, true
}

// realFile is p made absolute with its symbolic links resolved, when it is a regular file.
func realFile(p string) (string, bool) {
	if p == "" {
		return "", false
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", false
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", false
	}
	if st, err := os.Stat(real); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	return real, true
}

func unsetEnv(env []string, key string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func setEnv(env []string, key, value string) []string {
	return append(unsetEnv(env, key), key+"="+value)
}

// cleanup ends what the command left behind and removes its scratch directory. Without a PID
// namespace, the command's cgroup is killed where it has one, and every process whose
// environment carries the command's marker is frozen, then killed: a child that left the
// process group (setsid), or the cgroup, is found that way too.
func (c *contained) cleanup() {
	if c.kind == SandboxNone {
		c.cgroup.kill()
		killMarked(c.marker)
	}
	if c.scratch != "" {
		_ = forceRemove(c.scratch)
	}
}

// planted looks, once cleanup has ended every process the command started, for what it left
// that git would obey later: a git directory in a tree, a link from a tree into a directory it
// could write outside it, an entry in its Go caches Go does not make (see *PlantedGitError).
func (c *contained) planted() error {
	var errs []error
	for _, scan := range c.git {
		if err := scan.planted(c.fence); err != nil {
			errs = append(errs, err)
		}
	}
	if c.goCaches != "" {
		if err := checkGoCaches(c.goCaches, c.network); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
