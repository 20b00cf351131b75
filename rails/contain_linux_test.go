package rails

import (
	"bufio"
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
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// These tests run a locum of their own, this test binary again (see helper), where the test
// places it: in a cgroup, or in a mount namespace where the host masks a file of /proc. The
// scenario it runs is named in scenarioVar; it waits for a line on its standard input before
// it starts, so that it runs in the cgroup from its first step.
const scenarioVar = "LOCUM_TEST_CONTAIN_SCENARIO"

// helper is this test binary, started to run the test named again with scenario: wrap, when
// set, is the command it runs under; cgroup, when set, the cgroup it is moved into before it is
// let go.
type helper struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startHelper(t *testing.T, scenario, cgroup string, wrap []string, env ...string) *helper {
	t.Helper()
	h := &helper{}
	argv := append(append([]string(nil), wrap...), os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	h.cmd = exec.Command(argv[0], argv[1:]...)
	h.cmd.Env = append(append(os.Environ(), scenarioVar+"="+scenario), env...)
	h.cmd.Stdout, h.cmd.Stderr = &h.out, &h.out
	stdin, err := h.cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, h.cmd.Start())
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			_ = h.cmd.Process.Kill()
			_ = h.cmd.Wait()
		}
	})
	if cgroup != "" {
		moveTo(t, cgroup, h.cmd.Process.Pid)
	}
	_, err = stdin.Write([]byte("go\n"))
	require.NoError(t, err)
	require.NoError(t, stdin.Close())
	return h
}

// wait waits for the helper to end and says how it ended, its output logged.
func (h *helper) wait(t *testing.T) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- h.cmd.Wait() }()
	select {
	case err := <-done:
		t.Logf("the helper's run:\n%s", h.out.String())
		return err
	case <-time.After(hangDeadline):
		_ = h.cmd.Process.Kill()
		<-done
		t.Fatalf("the helper hangs:\n%s", h.out.String())
		return nil
	}
}

// inScenario says this process is a helper started to run scenario; it has then waited for its
// go.
func inScenario(scenario string) bool {
	if os.Getenv(scenarioVar) != scenario {
		return false
	}
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	return true
}

// testCgroup makes a cgroup of the test's own beside this process's, and removes it after the
// test with whatever it then holds.
func testCgroup(t *testing.T) string {
	t.Helper()
	own, err := ownCgroupDir()
	if err != nil {
		t.Skipf("no cgroup v2 here: %v", err)
	}
	id := make([]byte, 6)
	_, _ = rand.Read(id)
	dir := filepath.Join(own, "locum-test-"+hex.EncodeToString(id))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no cgroup of the test's own can be made here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		t.Skip("this kernel has no cgroup.kill")
	}
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte("0"), 0)
		_ = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		removeCgroupTree(t, dir)
	})
	return dir
}

// removeCgroupTree removes the cgroup dir and every one below it, each once its processes have
// exited.
func removeCgroupTree(t *testing.T, dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.IsDir() {
			removeCgroupTree(t, filepath.Join(dir, e.Name()))
		}
	}
	deadline := time.Now().Add(hangDeadline)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			t.Errorf("the test's cgroup %s stays: %v", dir, err)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func moveTo(t *testing.T, cgroup string, pid int) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(cgroup, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0))
}

// In the sandbox, as root, the verify cannot make a user namespace of its own, and so cannot
// mount the cgroup file system and write the cgroup locum runs in: cgroup.kill there would end
// locum and every process beside it (the operator's shell, anything else of theirs), and
// cgroup.freeze would stop locum past its timeout. The attacker is this test binary again, run
// by the verify in new user, mount and cgroup namespaces, keeping the capabilities it holds there:
// it mounts cgroup2 and writes the cgroup.kill of the namespace's root, the cgroup it was in.
func TestSandboxCannotReachLocumsCgroup(t *testing.T) {
	switch {
	case os.Getenv(scenarioVar) == "cgroup-attack-in-ns":
		dir, err := os.MkdirTemp("", "cgroup")
		if err == nil {
			if err = unix.Mount("none", dir, "cgroup2", 0, ""); err != nil {
				err = fmt.Errorf("mount: %w", err)
			}
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0)
		}
		fmt.Println("attack:", err)
		return
	case inScenario("cgroup-attack"):
		// As where no cgroup of the command's own can be made: the verify runs in locum's.
		newCgroup = func(string) *verifyCgroup { return nil }
		dir := t.TempDir()
		bin, err := os.ReadFile(os.Args[0])
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, "attacker"), bin, 0o755))
		res, err := RunShell(context.Background(), ShellCommand{Dir: dir, Sandbox: &Sandbox{Writable: []string{dir}},
			Command: scenarioVar + `=cgroup-attack-in-ns unshare -U -m -C --keep-caps ./attacker -test.run='^` + t.Name() + `$' -test.count=1; echo ENDED`})
		require.NoError(t, err)
		require.Equal(t, SandboxBwrap, res.Sandbox, res.SandboxWhy)
		t.Logf("the verify's run:\n%s", res.Output)
		assert.Contains(t, string(res.Output), "ENDED")
		assert.NotContains(t, string(res.Output), "attack: <nil>")
		return
	}
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	cg := testCgroup(t)
	// A process of the operator's beside locum.
	beside := exec.Command("sleep", "300")
	require.NoError(t, beside.Start())
	besideDone := make(chan struct{})
	go func() { _ = beside.Wait(); close(besideDone) }()
	t.Cleanup(func() { _ = beside.Process.Kill(); <-besideDone })
	moveTo(t, cg, beside.Process.Pid)

	h := startHelper(t, "cgroup-attack", cg, nil)
	require.NoError(t, h.wait(t), "locum, in the cgroup the verify attacked, did not end as it should")
	select {
	case <-besideDone:
		t.Fatal("the process beside locum was killed")
	default:
	}
}

// After the cgroup locum runs in was killed whole (a process left in it, locum here, goes on),
// the kernel kills at birth every process locum would start straight into a cgroup of the
// command's own: without the sandbox, each verify would end "signal killed" before it ran. The
// command starts without one instead.
func TestCommandsRunAfterLocumsCgroupWasKilled(t *testing.T) {
	if inScenario("start-after-kill") {
		dir := t.TempDir()
		res, err := RunShell(context.Background(), ShellCommand{Dir: dir, Command: "echo ran", Sandbox: &Sandbox{Off: true, Writable: []string{dir}}})
		require.NoError(t, err)
		assert.Equal(t, "", res.Signal)
		assert.True(t, res.Exited)
		assert.Equal(t, "ran\n", string(res.Output))
		return
	}
	cg := testCgroup(t)
	victim := exec.Command("sleep", "300")
	require.NoError(t, victim.Start())
	moveTo(t, cg, victim.Process.Pid)
	require.NoError(t, os.WriteFile(filepath.Join(cg, "cgroup.kill"), []byte("1"), 0))
	require.Error(t, victim.Wait(), "killed with its cgroup")

	h := startHelper(t, "start-after-kill", cg, nil)
	require.NoError(t, h.wait(t))
}

// Without the sandbox, a verify child that dropped its marker (LOCUM_VERIFY_RUN) and left the
// process group is found by its cgroup only. A locum killed by SIGKILL in one cgroup leaves the
// verify's cgroup beside that one; the next locum, started from another cgroup, still finds it
// and ends the child before it restores the file: the child's late write never lands.
func TestReapOrphansInAnotherCgroup(t *testing.T) {
	if inScenario("orphan-verify") {
		dir := os.Getenv("LOCUM_TEST_DIR")
		_, _ = RunShell(context.Background(), ShellCommand{Dir: dir, Sandbox: &Sandbox{Off: true, Writable: []string{dir}},
			Command: `env -u ` + markerVar + ` setsid sh -c 'echo $$ > child.pid; while [ ! -e release ]; do sleep 0.05; done; echo LATE >> calc.go' </dev/null >/dev/null 2>&1 &
until [ -s child.pid ]; do sleep 0.01; done; touch started; exec sleep 300`})
		return
	}
	cg := testCgroup(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "calc.go"), []byte("package calc\n"), 0o644))
	h := startHelper(t, "orphan-verify", cg, nil, "LOCUM_TEST_DIR="+dir)
	waitForFile(t, filepath.Join(dir, "started"))
	require.NoError(t, h.cmd.Process.Kill())
	_ = h.wait(t)
	data, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	require.NoError(t, err)
	child, err := strconv.Atoi(strings.TrimSpace(string(data)))
	require.NoError(t, err)

	ReapOrphans()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "release"), nil, 0o644))
	deadline := time.Now().Add(hangDeadline)
	for !ended("/proc/"+strconv.Itoa(child)) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.True(t, ended("/proc/"+strconv.Itoa(child)), "the verify's child still runs")
	data, err = os.ReadFile(filepath.Join(dir, "calc.go"))
	require.NoError(t, err)
	assert.Equal(t, "package calc\n", string(data), "the orphaned verify wrote the file after recovery")
}

// A file of /proc the host masked (bound /dev/null over it, as container runtimes do to
// /proc/kcore and the like) stays masked in the sandbox, whose /proc is a fresh one. Such a mask
// keeps bwrap from making a user namespace (the kernel will not mount a fresh /proc there), so the
// sandbox is made without one; where the command could then make a user namespace of its own, as
// root usually can, the sandbox is not in force and says why.
func TestSandboxKeepsTheHostsMaskedProcFiles(t *testing.T) {
	if inScenario("masked-proc") {
		dir := t.TempDir()
		res, err := RunShell(context.Background(), ShellCommand{Dir: dir, Sandbox: &Sandbox{Writable: []string{dir}},
			Command: `cat /proc/version; echo end`})
		require.NoError(t, err)
		if res.Sandbox != SandboxBwrap {
			assert.Contains(t, res.SandboxWhy, "without one, bwrap's sandbox lets the command make a user namespace of its own")
			return
		}
		assert.Equal(t, "end\n", string(res.Output), "the sandbox shows the file the host masked")
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("only root masks a file of /proc")
	}
	if ok, why := SandboxAvailable(); !ok {
		t.Skip(why)
	}
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare is not installed")
	}
	// The mask is made in a mount namespace of the helper's own; the host's /proc stays as it is.
	h := startHelper(t, "masked-proc", "", []string{"unshare", "-m", "--propagation", "private", "sh", "-c", `mount --bind /dev/null /proc/version && exec "$@"`, "sh"})
	require.NoError(t, h.wait(t))
}
