//go:build unix

package rails

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolCaches(t *testing.T) {
	cases := []struct {
		name     string
		dir      string
		network  bool
		writable []string
		vars     []string
	}{
		{"the repository's", "/c/locum/verify-go/k", false,
			[]string{"/c/locum/verify-go/k/build"}, []string{"GOCACHE=/c/locum/verify-go/k/build"}},
		{"with the network", "/c/locum/verify-go/k", true,
			[]string{"/c/locum/verify-go/k/build", "/c/locum/verify-go/k/mod"},
			[]string{"GOCACHE=/c/locum/verify-go/k/build", "GOMODCACHE=/c/locum/verify-go/k/mod", "GOFLAGS=-modcacherw"}},
		{"a relative directory is none", "rel", false, nil, nil},
		{"none", "", false, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := toolCaches(tc.dir, tc.network)
			assert.Equal(t, tc.writable, got.writable)
			assert.Equal(t, tc.vars, got.env)
		})
	}
}

func TestSetEnvReplacesEveryValue(t *testing.T) {
	assert.Equal(t, []string{"A=1", "HOMEX=2", "HOME=/s"}, setEnv([]string{"HOME=/a", "A=1", "HOMEX=2", "HOME=/b"}, "HOME", "/s"))
}

// Without a sandbox a detached descendant is found by the marker in its environment.
func TestOffKillsMarkedDescendants(t *testing.T) {
	dir := t.TempDir()
	res, err := RunShell(context.Background(), ShellCommand{Dir: dir, Sandbox: &Sandbox{Off: true},
		Command: `setsid sh -c 'echo $$ > child.pid; exec sleep 300' & until [ -s child.pid ]; do sleep 0.01; done`})
	require.NoError(t, err)
	assert.Equal(t, SandboxNone, res.Sandbox)
	data, err := os.ReadFile(dir + "/child.pid")
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)
	// Killed, it may still wait a moment for its new parent to reap it: a zombie has ended.
	assert.Eventually(t, func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		_, after, _ := strings.Cut(string(stat), ") ")
		return strings.HasPrefix(after, "Z")
	}, 2*time.Second, 10*time.Millisecond, "the detached child was killed when the command ended")
}

// BenchmarkVerifyContained is what containing a verify adds to it: the same command (true) run
// in a process group and in the sandbox. The README quotes the ratio.
func BenchmarkVerifyContained(b *testing.B) {
	dir := b.TempDir()
	for _, bc := range []struct {
		name string
		sb   *Sandbox
	}{
		{"group", nil},
		{"none", &Sandbox{Off: true, Writable: []string{dir}}},
		{"bwrap", &Sandbox{Writable: []string{dir}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.name == "bwrap" {
				if ok, why := SandboxAvailable(); !ok {
					b.Skip(why)
				}
			}
			for b.Loop() {
				res, err := RunShell(context.Background(), ShellCommand{Command: "true", Dir: dir, Sandbox: bc.sb})
				if err != nil || !res.Exited || res.ExitCode != 0 {
					b.Fatalf("%+v %v", res, err)
				}
			}
		})
	}
}

// Where bubblewrap cannot run, a sandbox the operator requires is refused before anything runs,
// and one that is not required runs the command in its process group, saying so.
func TestNoBwrap(t *testing.T) {
	probe := bwrapProbe
	t.Cleanup(func() { bwrapProbe = probe })
	bwrapProbe = func() (bwrapInfo, error) { return bwrapInfo{}, errors.New("bwrap is not installed") }
	dir := t.TempDir()
	_, err := RunShell(context.Background(), ShellCommand{Command: "touch ran", Dir: dir, Sandbox: &Sandbox{Require: true}})
	var refused *NoSandboxError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), "bwrap is not installed")
	assert.NoFileExists(t, dir+"/ran")
	res, err := RunShell(context.Background(), ShellCommand{Command: "touch ran", Dir: dir, Sandbox: &Sandbox{}})
	require.NoError(t, err)
	assert.Equal(t, SandboxNone, res.Sandbox)
	assert.Equal(t, "bwrap is not installed", res.SandboxWhy, "why the sandbox was not in force, for the journal")
	assert.FileExists(t, dir+"/ran")
	res, err = RunShell(context.Background(), ShellCommand{Command: "true", Dir: dir, Sandbox: &Sandbox{Off: true}})
	require.NoError(t, err)
	assert.Equal(t, SandboxNone, res.Sandbox)
	assert.Empty(t, res.SandboxWhy, "none was the operator's choice")
}

func TestCapsDropped(t *testing.T) {
	const zero = "0000000000000000"
	status := func(eff, bnd, nnp string) string {
		return "Name:\tcat\nCapInh:\t" + zero + "\nCapPrm:\t" + eff + "\nCapEff:\t" + eff + "\nCapBnd:\t" + bnd +
			"\nCapAmb:\t" + zero + "\nNoNewPrivs:\t" + nnp + "\n"
	}
	cases := []struct {
		name   string
		status string
		err    string
	}{
		{"nothing held, nothing to regain", status(zero, zero, "0"), ""},
		{"a bounding set, but no_new_privs", status(zero, "000001ffffffffff", "1"), ""},
		{"root's capabilities kept", status("000001fffeffffff", "000001fffeffffff", "1"), "leaves the sandboxed command capabilities"},
		{"a bounding set an exec could use", status(zero, "000001ffffffffff", "0"), "could regain"},
		{"no capability lines", "Name:\tcat\n", "does not show its capabilities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := capsDropped([]byte(tc.status))
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				assert.ErrorContains(t, err, tc.err)
			}
		})
	}
}

// A bwrap that contains nothing (it runs the command as it is) leaves root its capabilities: the
// probe, which runs the sandbox's own argv once, finds them and says the sandbox is not in force.
func TestProbeRefusesABwrapThatKeepsCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root has capabilities for a bwrap to keep")
	}
	bin := t.TempDir()
	fake := "#!/bin/sh\nwhile [ \"$#\" -gt 0 ] && [ \"$1\" != -- ]; do shift; done\nshift\nexec \"$@\"\n"
	require.NoError(t, os.WriteFile(bin+"/bwrap", []byte(fake), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err := probeBwrap()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "leaves the sandboxed command capabilities")
}

// A bwrap that drops every capability but leaves /proc as bubblewrap makes it leaves root the
// kernel's settings: the probe, which tries to open them for writing in the sandbox's own argv,
// finds them and says the sandbox is not in force.
func TestProbeRefusesABwrapThatLeavesProcWritable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only uid 0 may write the kernel's settings")
	}
	real, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap is not installed")
	}
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	bin := t.TempDir()
	// Passes every option on but the read-only binds over /proc.
	fake := "#!/bin/bash\nargs=()\nwhile [ \"$#\" -gt 0 ]; do\n" +
		"  if [ \"$1\" = --ro-bind-try ] && [[ $2 == /proc/* ]]; then shift 3; continue; fi\n" +
		"  if [ \"$1\" = -- ]; then break; fi\n  args+=(\"$1\"); shift\ndone\nexec " + real + " \"${args[@]}\" \"$@\"\n"
	require.NoError(t, os.WriteFile(bin+"/bwrap", []byte(fake), 0o755))
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	_, err = probeBwrap()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "write the host's kernel settings")
	assert.Contains(t, err.Error(), "/proc/sys/kernel/printk_ratelimit_burst")
}

func TestNothingWritable(t *testing.T) {
	assert.NoError(t, nothingWritable([]byte("CapEff:\t0\n")))
	err := nothingWritable([]byte("CapEff:\t0\n" + probeWritable + " /proc/sys/kernel/core_pattern\n" + probeWritable + " /proc/sysrq-trigger\n"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "(/proc/sys/kernel/core_pattern, /proc/sysrq-trigger)")
}

// Every entry of /proc that is not a process's own is kept read-only, whatever its type and mode:
// a directory, a file with a write bit or none, and a special file where the host masked one (a
// container runtime binds /dev/null over /proc/kcore): the sandbox's fresh /proc would show the
// real one.
func TestProcReadOnly(t *testing.T) {
	proc := tree(t, map[string]string{"1/": "", "42/": "", "sys/": "", "irq/": "", "fs/": "", "sysrq-trigger": "", "mtrr": "", "meminfo": "",
		"self": "->42", "net": "->self/net", "mounts": "->self/mounts", "thread-self": "->42/task/42"})
	require.NoError(t, os.Chmod(filepath.Join(proc, "sysrq-trigger"), 0o200))
	require.NoError(t, os.Chmod(filepath.Join(proc, "mtrr"), 0o644))
	require.NoError(t, os.Chmod(filepath.Join(proc, "meminfo"), 0o444))
	require.NoError(t, syscall.Mkfifo(filepath.Join(proc, "timer_list"), 0o400), "a special file")
	var want []string
	for _, n := range []string{"fs", "irq", "meminfo", "mtrr", "sys", "sysrq-trigger", "timer_list"} {
		want = append(want, filepath.Join(proc, n))
	}
	assert.Equal(t, want, procReadOnly(proc))
}

// As root, no file of the kernel's in /proc (a process's own aside) opens for writing in the
// sandbox, with no capability: kernel.core_pattern would have the kernel run a program of the
// verify's as root in the host's namespaces at the next crash, and /proc/sysrq-trigger reboots
// the machine. Opening writes nothing; a sysctl written its own value back changes nothing.
func TestSandboxKeepsProcReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only uid 0 may write the kernel's settings")
	}
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	dir := t.TempDir()
	run := func(t *testing.T, command string) ShellResult {
		t.Helper()
		res, err := RunShell(context.Background(), ShellCommand{Command: command, Dir: dir, Sandbox: &Sandbox{Writable: []string{dir}}})
		require.NoError(t, err)
		require.Equal(t, SandboxBwrap, res.Sandbox)
		return res
	}
	t.Run("write a sysctl", func(t *testing.T) {
		const sysctl = "/proc/sys/kernel/printk_ratelimit_burst"
		if _, err := os.Stat(sysctl); err != nil {
			t.Skip(err)
		}
		res := run(t, `v=$(cat `+sysctl+`) && echo "$v" > `+sysctl)
		assert.NotEqual(t, 0, res.ExitCode, "the sysctl was written")
		assert.Contains(t, string(res.Output), "Read-only file system")
	})
	t.Run("open /proc/sysrq-trigger for writing", func(t *testing.T) {
		if _, err := os.Stat("/proc/sysrq-trigger"); err != nil {
			t.Skip("this kernel has no /proc/sysrq-trigger")
		}
		res := run(t, `exec 3>>/proc/sysrq-trigger`)
		assert.NotEqual(t, 0, res.ExitCode, "/proc/sysrq-trigger opened for writing")
		assert.Contains(t, string(res.Output), "Read-only file system")
	})
	t.Run("open any of the kernel's files for writing", func(t *testing.T) {
		res := run(t, `find /proc -path '/proc/[0-9]*' -prune -o -path /proc/self -prune -o -path /proc/thread-self -prune -o -type f -perm /222 -print 2>/dev/null |
			while read -r f; do if (: >>"$f") 2>/dev/null; then echo "writable: $f"; fi; done; echo done`)
		assert.Equal(t, "done\n", string(res.Output))
	})
}

// As root, the verify in the sandbox holds no capability, so none of the ways out that root's
// capabilities open works: a remount of / read-write, a write outside the tree (under /root), a
// join of another network namespace, an unmount of the sandbox's /proc to see the host's.
func TestSandboxLeavesRootNoWayOut(t *testing.T) {
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	dir, outside := t.TempDir(), t.TempDir()
	res, err := RunShell(context.Background(), ShellCommand{Command: "cat /proc/self/status", Dir: dir, Sandbox: &Sandbox{Writable: []string{dir}}})
	require.NoError(t, err)
	assert.Equal(t, SandboxBwrap, res.Sandbox)
	assert.NoError(t, capsDropped(res.Output))
	assert.Contains(t, string(res.Output), "CapEff:\t0000000000000000\n")

	rootFile := fmt.Sprintf("/root/.locum-sandbox-test-%d", os.Getpid())
	cases := []struct {
		name, attack, tool string
	}{
		{"remount / read-write", "mount -o remount,rw /", "mount"},
		{"write outside the tree", "mount -o remount,rw / 2>/dev/null; echo x > " + outside + "/x", ""},
		{"write under /root", "mount -o remount,rw / 2>/dev/null; echo x > " + rootFile, ""},
		{"join another network namespace", "nsenter --net=/proc/1/ns/net true", "nsenter"},
		{"unmount /proc", "umount /proc || umount -l /proc", "umount"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tool != "" {
				if _, err := exec.LookPath(tc.tool); err != nil {
					t.Skipf("%s is not installed", tc.tool)
				}
			}
			res, err := RunShell(context.Background(), ShellCommand{Command: "if " + tc.attack + "; then exit 0; fi; exit 1",
				Dir: dir, Sandbox: &Sandbox{Writable: []string{dir}}})
			require.NoError(t, err)
			assert.Equal(t, 1, res.ExitCode, "the attack worked in the sandbox: %s", res.Output)
		})
	}
	assert.NoFileExists(t, outside+"/x")
	if _, err := os.Stat(rootFile); err == nil {
		os.Remove(rootFile)
		t.Errorf("the verify wrote %s", rootFile)
	}
}

// Each repository's verify cache is its own: a key a repository cannot choose, the same for the
// repository however it is named, another for another repository, and another for one made later
// at the same path.
func TestRepoCacheDir(t *testing.T) {
	cache := t.TempDir()
	a, b := t.TempDir(), t.TempDir()
	ka, err := RepoCacheDir(cache, a)
	require.NoError(t, err)
	kb, err := RepoCacheDir(cache, b)
	require.NoError(t, err)
	assert.NotEqual(t, ka, kb)
	assert.Equal(t, filepath.Join(cache, "verify-go"), filepath.Dir(ka))
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(a, link))
	again, err := RepoCacheDir(cache, link)
	require.NoError(t, err)
	assert.Equal(t, ka, again, "the same repository by a link")
	if birthTime(a) == "" {
		t.Skip("this file system keeps no birth time")
	}
	require.NoError(t, os.Remove(a))
	require.NoError(t, os.Mkdir(a, 0o755))
	later, err := RepoCacheDir(cache, a)
	require.NoError(t, err)
	assert.NotEqual(t, ka, later, "a repository made later at the same path")
}

// outsideTmp is a directory of the test's own outside /tmp, which the sandbox empties whatever
// else holds: what hides a file there from a verify is the sandbox's Hidden.
func outsideTmp(t *testing.T) string {
	t.Helper()
	base, err := os.UserCacheDir()
	if err != nil || strings.HasPrefix(base, "/tmp/") {
		t.Skip("no cache directory outside /tmp to hide from the sandbox")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		t.Skip(err)
	}
	dir, err := os.MkdirTemp(base, "locum-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// plantedEntry is named as Go names an entry of the build cache's directory 00.
var plantedEntry = "00" + strings.Repeat("7e", 31) + "-d"

// A verify sees its repository's Go caches and nothing else of locum's: not another repository's
// cache (where a verify could plant what the next one links into its tests), not the embedding
// cache, not the state directory's keys, not the config directory nor the key that signs routing
// wherever it lies.
func TestSandboxHidesLocumsFiles(t *testing.T) {
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	base := outsideTmp(t)
	cache, state, config := filepath.Join(base, "cache", "locum"), filepath.Join(base, "state", "locum"), filepath.Join(base, "config", "locum")
	require.NoError(t, os.MkdirAll(cache, 0o700))
	require.NoError(t, os.MkdirAll(state, 0o700))
	require.NoError(t, os.MkdirAll(config, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(config, "signing.key"), []byte("private"), 0o600))
	keys := filepath.Join(base, "keys")
	require.NoError(t, os.Mkdir(keys, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(keys, "custom.key"), []byte("private"), 0o600))
	require.NoError(t, os.Symlink("custom.key", filepath.Join(keys, "link.key")))
	require.NoError(t, os.WriteFile(filepath.Join(cache, "embeddings.db"), []byte("vectors"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(state, "rollback.key"), []byte("secret"), 0o600))
	repoA, repoB := filepath.Join(base, "a"), filepath.Join(base, "b")
	require.NoError(t, os.Mkdir(repoA, 0o755))
	require.NoError(t, os.Mkdir(repoB, 0o755))
	cacheA, err := RepoCacheDir(cache, repoA)
	require.NoError(t, err)
	cacheB, err := RepoCacheDir(cache, repoB)
	require.NoError(t, err)
	sandbox := func(repo, goCaches string) *Sandbox {
		return &Sandbox{Writable: []string{repo}, GoCaches: goCaches, Hidden: []string{state, cache, config},
			HiddenFiles: []string{filepath.Join(config, "signing.key"), filepath.Join(keys, "link.key")}}
	}
	res, err := RunShell(context.Background(), ShellCommand{Dir: repoA, Sandbox: sandbox(repoA, cacheA),
		Command: `mkdir -p "$GOCACHE/00" && echo trojan > "$GOCACHE/00/` + plantedEntry + `" && printf %s "$GOCACHE"`})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitCode, string(res.Output))
	assert.Equal(t, filepath.Join(cacheA, "build"), string(res.Output))
	assert.FileExists(t, filepath.Join(cacheA, "build", "00", plantedEntry), "a verify writes its own repository's cache")

	cases := []struct{ name, attack string }{
		{"its cache is another's", `test "$GOCACHE" != ` + filepath.Join(cacheB, "build")},
		{"read what A planted", "cat " + filepath.Join(cacheA, "build", "00", plantedEntry)},
		{"write A's cache", "echo x > " + filepath.Join(cacheA, "build", "x")},
		{"list the other caches", "ls " + filepath.Join(cache, "verify-go") + " | grep -v " + filepath.Base(cacheB)},
		{"read the embedding cache", "cat " + filepath.Join(cache, "embeddings.db")},
		{"read the operator's key", "cat " + filepath.Join(state, "rollback.key")},
		{"read the signing key in the config directory", "grep private " + filepath.Join(config, "signing.key")},
		{"read the signing key at a path of its own", "grep private " + filepath.Join(keys, "custom.key")},
		{"read the signing key by its link", "grep private " + filepath.Join(keys, "link.key")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := RunShell(context.Background(), ShellCommand{Dir: repoB, Sandbox: sandbox(repoB, cacheB),
				Command: "if " + tc.attack + "; then exit 0; fi; exit 1"})
			require.NoError(t, err)
			assert.Equal(t, 1, res.ExitCode, "B's verify could: %s", res.Output)
		})
	}
	assert.NoFileExists(t, filepath.Join(cacheA, "build", "x"))
}

// A repository's caches are marked used at each verify; another's unused for a month go.
func TestPruneRepoCaches(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{"own": 90 * 24 * time.Hour, "recent": 24 * time.Hour, "stale": 31 * 24 * time.Hour, "build": 40 * 24 * time.Hour} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, name, "build"), 0o700))
		require.NoError(t, os.Chtimes(filepath.Join(dir, name), now.Add(-age), now.Add(-age)))
	}
	pruneRepoCaches(filepath.Join(dir, "own"), now)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{"own", "recent"}, names)
	st, err := os.Stat(filepath.Join(dir, "own"))
	require.NoError(t, err)
	assert.WithinDuration(t, now, st.ModTime(), time.Second)
}

// markedAlive lists the processes whose environment holds the test's mark and that have not
// ended: what a command left running.
func markedAlive(t *testing.T, mark string) []string {
	t.Helper()
	needle := []byte(mark + "\x00")
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var alive []string
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append(data, 0), needle) {
			continue
		}
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		alive = append(alive, strings.TrimSpace(string(stat)))
	}
	return alive
}

// Without a sandbox, a detached process that forks and lets its parent exit, in a loop, is never
// at the PID a scan found a moment before: it must still be gone when RunShell returns, by its
// cgroup where one can be made and by freezing every marked process where not.
func TestOffEndsAForkingChain(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here to find the command's processes by")
	}
	chain := `setsid bash -c 'hop() { echo $BASHPID >> hops; hop & exit 0; }; hop' >/dev/null 2>&1 & until [ -s hops ]; do :; done; exit 1`
	for _, tc := range []struct {
		name    string
		cgroups bool
	}{{"cgroup", true}, {"freeze", false}} {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.cgroups {
				orig := newCgroup
				t.Cleanup(func() { newCgroup = orig })
				newCgroup = func(string) *verifyCgroup { return nil }
			}
			for i := range 20 {
				dir := t.TempDir()
				mark := fmt.Sprintf("LOCUM_TEST_CHAIN=%s-%d-%d", tc.name, os.Getpid(), i)
				res, err := RunShell(context.Background(), ShellCommand{Command: chain, Dir: dir,
					Env: append(os.Environ(), mark), Sandbox: &Sandbox{Off: true, Writable: []string{dir}}})
				alive := markedAlive(t, mark)
				for _, stat := range alive {
					if pid, err := strconv.Atoi(strings.Fields(stat)[0]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				require.NoError(t, err)
				require.Equal(t, 1, res.ExitCode)
				require.Empty(t, alive, "run %d of 20: the forking chain outlived the command", i+1)
			}
		})
	}
}
