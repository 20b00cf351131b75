//go:build linux

package rails

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// asUserTree, in the environment, makes TestUnreadableDirectoriesAsAUser the run of the scenario
// as the normal user, in the tree it names.
const asUserTree = "LOCUM_TEST_UNREADABLE_TREE"

// unreadableScenario is a verify that hides a git directory in a directory locum cannot read, as
// the user running it (root reads every directory): the first run leaves the directory behind
// and is not trusted; the second, which would plant a git directory in it, is refused before
// anything runs, because the directory could not be read before it either; once the directory is
// readable again the verify runs.
func unreadableScenario(t *testing.T, root string) {
	modes := map[string]bool{"without the sandbox": true}
	if ok, _ := SandboxAvailable(); ok {
		modes["in the sandbox"] = false
	}
	for name, off := range modes {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(root, strconv.FormatBool(off))
			require.NoError(t, os.Mkdir(dir, 0o755))
			run := func(command string) (ShellResult, error) {
				return RunShell(context.Background(), ShellCommand{Dir: dir, Command: command, Sandbox: &Sandbox{Writable: []string{dir}, Off: off}})
			}
			res, err := run("mkdir d && chmod 111 d; exit 1")
			var pe *PlantedGitError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, []string{"d"}, pe.Unchecked)
			assert.Equal(t, 1, res.ExitCode)

			_, err = run("touch ran; chmod 755 d && mkdir -p d/.git/hooks && chmod 111 d; exit 0")
			var ue *UnreadableTreeError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, []string{"d"}, ue.Dirs)
			assert.Contains(t, err.Error(), "the verify was not run")
			assert.Contains(t, err.Error(), "chmod u+rx")
			assert.NoFileExists(t, filepath.Join(dir, "ran"), "nothing ran")

			require.NoError(t, os.Chmod(filepath.Join(dir, "d"), 0o755))
			res, err = run("exit 0")
			require.NoError(t, err)
			assert.Equal(t, 0, res.ExitCode)
		})
	}
}

// As root every directory reads, so the scenario runs as a normal user made for it: this test
// binary, copied where the user may run it, runs this test again as that user.
func TestUnreadableDirectoriesAsAUser(t *testing.T) {
	if root := os.Getenv(asUserTree); root != "" {
		unreadableScenario(t, root)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: TestUnreadableDirectories runs the scenario as this user")
	}
	uid, gid := normalUser(t)
	bin, err := os.MkdirTemp("", "locum-test-bin-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(bin) })
	require.NoError(t, os.Chmod(bin, 0o755))
	exe := filepath.Join(bin, "rails.test")
	copyFile(t, exe)
	root, err := os.MkdirTemp("", "locum-test-unreadable-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(root) })
	require.NoError(t, os.Chown(root, uid, gid))

	cmd := exec.Command(exe, "-test.run=^TestUnreadableDirectoriesAsAUser$", "-test.v", "-test.count=1")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), asUserTree+"="+root, "HOME="+root, "TMPDIR=")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", uid, out)
	require.NoError(t, err)
}

// normalUser is the uid and gid of locum-test, a user with no rights of its own, made for the
// test where there is none (and removed after it).
func normalUser(t *testing.T) (int, int) {
	t.Helper()
	const name = "locum-test"
	u, err := user.Lookup(name)
	if err != nil {
		out, err := exec.Command("useradd", "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name).CombinedOutput()
		if err != nil {
			t.Skipf("no normal user to run as: useradd: %v %s", err, out)
		}
		t.Cleanup(func() { _ = exec.Command("userdel", name).Run() })
		if u, err = user.Lookup(name); err != nil {
			t.Skipf("no normal user to run as: %v", err)
		}
	}
	uid, err := strconv.Atoi(u.Uid)
	require.NoError(t, err)
	gid, err := strconv.Atoi(u.Gid)
	require.NoError(t, err)
	return uid, gid
}

// copyFile copies this test binary to dst, executable by everyone.
func copyFile(t *testing.T, dst string) {
	t.Helper()
	src, err := os.Executable()
	require.NoError(t, err)
	in, err := os.Open(src)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}
