//go:build unix

package rails

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolCaches(t *testing.T) {
	cases := []struct {
		name     string
		env      []string
		network  bool
		writable []string
		vars     []string
	}{
		{"under HOME", []string{"HOME=/h"}, false,
			[]string{"/h/.cache/locum/verify-go/build"}, []string{"GOCACHE=/h/.cache/locum/verify-go/build"}},
		{"under the XDG cache, with the network", []string{"HOME=/h", "XDG_CACHE_HOME=/c"}, true,
			[]string{"/c/locum/verify-go/build", "/c/locum/verify-go/mod"},
			[]string{"GOCACHE=/c/locum/verify-go/build", "GOMODCACHE=/c/locum/verify-go/mod", "GOFLAGS=-modcacherw"}},
		// The operator's own caches are never the verify's: an entry it wrote would be trusted.
		{"the operator's GOCACHE is not taken", []string{"HOME=/h", "GOCACHE=/mine", "GOMODCACHE=/m"}, false,
			[]string{"/h/.cache/locum/verify-go/build"}, []string{"GOCACHE=/h/.cache/locum/verify-go/build"}},
		{"a relative XDG cache is ignored", []string{"HOME=/h", "XDG_CACHE_HOME=rel"}, false,
			[]string{"/h/.cache/locum/verify-go/build"}, []string{"GOCACHE=/h/.cache/locum/verify-go/build"}},
		{"no HOME", nil, false, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := toolCaches(tc.env, tc.network)
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
