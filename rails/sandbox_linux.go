package rails

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/locumdev/locum/untrusted"
	"golang.org/x/sys/unix"
)

// birthTime is when the file at path was made, where the file system keeps it: "" elsewhere.
func birthTime(path string) string {
	var st unix.Statx_t
	if err := unix.Statx(unix.AT_FDCWD, path, unix.AT_SYMLINK_NOFOLLOW, unix.STATX_BTIME, &st); err != nil || st.Mask&unix.STATX_BTIME == 0 {
		return ""
	}
	return fmt.Sprintf("%d.%09d", st.Btime.Sec, st.Btime.Nsec)
}

// verifyCgroup is a cgroup (v2) of a command's own, made where this process may make one beside
// itself: every process the command starts is born in it (clone3's CLONE_INTO_CGROUP, so none
// runs outside it for an instant), and cgroup.kill ends them all at once, one forking at that
// instant included, which no scan of /proc can promise.
type verifyCgroup struct {
	dir string
	fd  *os.File
}

// newCgroup makes the cgroup of the command marked marker beside this process's own, or returns
// nil where none can be made: no cgroup v2 mounted, a cgroup this user may not write (a systemd session's, a
// container's read-only mount), or a kernel without cgroup.kill (before Linux 5.14).
var newCgroup = makeCgroup

func makeCgroup(marker string) *verifyCgroup {
	own, err := ownCgroupDir()
	if err != nil {
		return nil
	}
	removeStaleCgroups(own, time.Now())
	dir := filepath.Join(own, cgroupPrefix+marker)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil
	}
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		_ = os.Remove(dir)
		return nil
	}
	fd, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return nil
	}
	if !bornAlive(int(fd.Fd())) {
		fd.Close()
		_ = os.Remove(dir)
		return nil
	}
	return &verifyCgroup{dir: dir, fd: fd}
}

// bornAlive says a process this one starts in the cgroup open at fd lives to run. Once the cgroup
// this process runs in has been killed whole (cgroup.kill, by anyone with write access to it: a
// process left in it, as this one was, goes on), the kernel kills at birth every child this
// process starts straight into another cgroup: each command would end "signal killed" before it
// ran. Such a cgroup is not used: the command starts in this process's own, and its process
// group and marker still find what it leaves. The child asked to run "/" fails its exec and says
// so; killed at birth, it says nothing, and the exec looks done.
func bornAlive(fd int) bool {
	pid, err := syscall.ForkExec("/", []string{"/"}, &syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}})
	if err != nil {
		return errors.Is(err, syscall.EACCES)
	}
	var ws syscall.WaitStatus
	for {
		if _, err := syscall.Wait4(pid, &ws, 0, nil); !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	return false
}

// cgroupPrefix names the cgroups of commands' own.
const cgroupPrefix = "locum-verify-"

// removeStaleCgroups removes the empty cgroups of commands beside this process's that a locum
// killed before it could remove them left: a cgroup with a process in it cannot be removed, and
// one made in the last minute may be about to get its command (which would then start without
// it, not fail).
func removeStaleCgroups(own string, now time.Time) {
	entries, err := os.ReadDir(own)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), cgroupPrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(own, e.Name()))
		}
	}
}

// killOrphanCgroups ends every process in the cgroups of commands whose locum no longer runs, and
// removes those cgroups. A locum killed while its verify ran leaves its cgroup holding the verify,
// beside the cgroup that locum ran in, which need not be this process's: each is looked for in
// the whole hierarchy this process sees (see verifyCgroups). The cgroup's name is the command's
// marker, which names the locum.
func killOrphanCgroups() {
	root, err := cgroupRoot()
	if err != nil {
		return
	}
	for _, dir := range verifyCgroups(root) {
		if ownerGone(strings.TrimPrefix(filepath.Base(dir), cgroupPrefix)) {
			(&verifyCgroup{dir: dir}).kill()
		}
	}
}

// The bounds of the walk of the cgroup hierarchy for commands' cgroups: a host holds a few hundred
// cgroups, a few levels deep (a systemd user session's app cgroups are about seven).
var (
	cgroupWalkDirs  = 1 << 16
	cgroupWalkDepth = 32
)

// verifyCgroups are the cgroups of commands' own (named cgroupPrefix and a marker) in the
// hierarchy under root, read breadth first within cgroupWalkDirs and cgroupWalkDepth. One is not
// read further: killing it kills every cgroup below it.
func verifyCgroups(root string) []string {
	var found []string
	type dir struct {
		path  string
		depth int
	}
	queue := []dir{{root, 0}}
	read := 0
	for len(queue) > 0 && read < cgroupWalkDirs {
		d := queue[0]
		queue = queue[1:]
		read++
		_ = eachEntry(d.path, func(e fs.DirEntry) bool {
			if !e.IsDir() {
				return true
			}
			child := filepath.Join(d.path, e.Name())
			switch {
			case strings.HasPrefix(e.Name(), cgroupPrefix):
				found = append(found, child)
			case d.depth+1 < cgroupWalkDepth && len(queue) < cgroupWalkDirs:
				queue = append(queue, dir{child, d.depth + 1})
			}
			return true
		})
	}
	return found
}

// place starts the command in the cgroup, when there is one.
func (g *verifyCgroup) place(attr *syscall.SysProcAttr) {
	if g != nil {
		attr.UseCgroupFD = true
		attr.CgroupFD = int(g.fd.Fd())
	}
}

// kill ends every process in the cgroup, waits (within reapDeadline) until it holds none, and
// removes it.
func (g *verifyCgroup) kill() {
	if g == nil {
		return
	}
	if g.fd != nil {
		defer g.fd.Close()
	}
	_ = os.WriteFile(filepath.Join(g.dir, "cgroup.kill"), []byte("1"), 0)
	deadline := time.Now().Add(reapDeadline)
	for {
		// A cgroup holding only zombies is empty; it can be removed once every process has
		// exited.
		err := os.Remove(g.dir)
		if err == nil || !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// ownCgroupDir is where this process's cgroup v2 is mounted: its path in /proc/self/cgroup
// ("0::PATH") under the mount of the cgroup2 file system that shows it.
func ownCgroupDir() (string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	path := ""
	for line := range strings.SplitSeq(string(data), "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			path = p
		}
	}
	if !strings.HasPrefix(path, "/") {
		return "", errors.New("no cgroup v2")
	}
	mounts, err := cgroup2Mounts()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		rel, err := filepath.Rel(m.root, path)
		if err != nil || !filepath.IsLocal(rel) {
			continue
		}
		return filepath.Join(m.point, rel), nil
	}
	return "", errors.New("no cgroup v2 mounted")
}

// cgroupRoot is where the root of the cgroup v2 hierarchy this process sees (its cgroup
// namespace's) is mounted; where no mount shows the root, the mount that shows this process's
// own cgroup.
func cgroupRoot() (string, error) {
	mounts, err := cgroup2Mounts()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if m.root == "/" {
			return m.point, nil
		}
	}
	own, err := ownCgroupDir()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if untrusted.Inside(m.point, own) {
			return m.point, nil
		}
	}
	return own, nil
}

// cgroupMount is a mount of the cgroup2 file system: the directory of the hierarchy it shows
// (root), and where.
type cgroupMount struct{ root, point string }

// cgroup2Mounts are this process's mounts of the cgroup2 file system, from /proc/self/mountinfo.
func cgroup2Mounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []cgroupMount
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
		pre, post, ok := bytes.Cut(sc.Bytes(), []byte(" - "))
		if !ok || !bytes.HasPrefix(post, []byte("cgroup2 ")) {
			continue
		}
		fields := strings.Fields(string(pre))
		if len(fields) < 5 {
			continue
		}
		out = append(out, cgroupMount{root: unescapeMount(fields[3]), point: unescapeMount(fields[4])})
	}
	return out, sc.Err()
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, \011, \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
