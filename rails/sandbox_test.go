//go:build unix

package rails

import (
	"context"
	"errors"
	"os"
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
	bwrapProbe = func() (string, error) { return "", errors.New("bwrap is not installed") }
	dir := t.TempDir()
	_, err := RunShell(context.Background(), ShellCommand{Command: "touch ran", Dir: dir, Sandbox: &Sandbox{Require: true}})
	var refused *NoSandboxError
	require.ErrorAs(t, err, &refused)
	assert.Contains(t, err.Error(), "bwrap is not installed")
	assert.NoFileExists(t, dir+"/ran")
	res, err := RunShell(context.Background(), ShellCommand{Command: "touch ran", Dir: dir, Sandbox: &Sandbox{}})
	require.NoError(t, err)
	assert.Equal(t, SandboxNone, res.Sandbox)
	assert.FileExists(t, dir+"/ran")
}
