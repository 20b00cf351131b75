package rails

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A locum killed while its verify ran leaves the verify's cgroup behind: the next one removes it
// once it is empty and a minute old, and nothing else.
func TestRemoveStaleCgroups(t *testing.T) {
	own := t.TempDir()
	now := time.Now()
	for name, age := range map[string]time.Duration{
		cgroupPrefix + "stale": time.Hour, cgroupPrefix + "new": time.Second, cgroupPrefix + "busy": time.Hour, "other": time.Hour,
	} {
		require.NoError(t, os.Mkdir(filepath.Join(own, name), 0o700))
		require.NoError(t, os.Chtimes(filepath.Join(own, name), now.Add(-age), now.Add(-age)))
	}
	// A cgroup with a process in it refuses rmdir; a directory with a file in it stands for one.
	require.NoError(t, os.WriteFile(filepath.Join(own, cgroupPrefix+"busy", "cgroup.procs"), []byte("1\n"), 0o600))
	require.NoError(t, os.Chtimes(filepath.Join(own, cgroupPrefix+"busy"), now.Add(-time.Hour), now.Add(-time.Hour)))
	removeStaleCgroups(own, now)
	entries, err := os.ReadDir(own)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	assert.Equal(t, []string{cgroupPrefix + "busy", cgroupPrefix + "new", "other"}, names)
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/sys/fs/cgroup":     "/sys/fs/cgroup",
		`/mnt/a\040b`:        "/mnt/a b",
		`/a\134b`:            `/a\b`,
		`/trailing\04`:       `/trailing\04`,
		`/not\999octal\011x`: "/not\\999octal\tx",
	} {
		assert.Equal(t, want, unescapeMount(in), in)
	}
}

// deadMarker is the marker of a locum that has exited: a process started, read and ended.
func deadMarker(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	require.NoError(t, cmd.Start())
	start := startTime(cmd.Process.Pid)
	require.NotEmpty(t, start)
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	return fmt.Sprintf("%d-%s-0123456789abcdef", cmd.Process.Pid, start)
}

func TestMarkerOwner(t *testing.T) {
	own := newMarker()
	pid, start, ok := markerOwner(own)
	require.True(t, ok)
	assert.Equal(t, os.Getpid(), pid)
	assert.Equal(t, startTime(os.Getpid()), start)
	assert.False(t, ownerGone(own), "this process runs")
	assert.True(t, ownerGone(deadMarker(t)), "an ended process")
	// The pid of this process with another start time is another process's: that locum is gone.
	assert.True(t, ownerGone(fmt.Sprintf("%d-1-abc", os.Getpid())))
	for _, m := range []string{"", "abc", "12", "12-", "-5-x", "x-5-y", "0-5-x"} {
		assert.False(t, ownerGone(m), "%q names no locum", m)
	}
}

// A verify a killed locum left running is ended by ReapOrphans, whether it is found by its marker
// or in its cgroup; one whose locum runs is left alone.
func TestReapOrphans(t *testing.T) {
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc here to find processes by")
	}
	start := func(marker string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), markerVar+"="+marker)
		require.NoError(t, cmd.Start())
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd
	}
	orphan, live := start(deadMarker(t)), start(newMarker())
	exited := make(chan struct{})
	go func() { _ = orphan.Wait(); close(exited) }()
	ReapOrphans()
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the orphaned verify still runs")
	}
	assert.NoError(t, live.Process.Signal(syscall.Signal(0)), "the verify of a running locum still runs")

	t.Run("in its cgroup", func(t *testing.T) {
		marker := deadMarker(t)
		g := makeCgroup(marker)
		if g == nil {
			t.Skip("no cgroup of a command's own can be made here")
		}
		// Without its marker, only the cgroup finds it.
		cmd := exec.Command("sleep", "60")
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		g.place(cmd.SysProcAttr)
		require.NoError(t, cmd.Start())
		g.fd.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
		ReapOrphans()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("the verify in the orphaned cgroup still runs")
		}
		assert.NoDirExists(t, g.dir)
	})
}

// A file of /proc the host masked with a character device (/dev/null, as container runtimes mask
// /proc/kcore and /proc/timer_list) is kept as the host shows it.
func TestProcReadOnlyKeepsAMaskedFile(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root makes device files")
	}
	proc := tree(t, map[string]string{"1/": "", "sys/": "", "self": "->1"})
	require.NoError(t, syscall.Mknod(filepath.Join(proc, "kcore"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	assert.Equal(t, []string{filepath.Join(proc, "kcore"), filepath.Join(proc, "sys")}, procReadOnly(proc))
}
