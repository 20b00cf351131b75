//go:build unix

package rails

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reapDeadline bounds the freezing of a command's processes: past it, whatever was found is
// killed as it stands.
const reapDeadline = 2 * time.Second

// killMarked kills every process of this user whose environment holds markerVar=marker. Killing
// each as it is found loses to a process that forks and lets its parent exit in a loop: the scan
// finds a PID whose successor already runs. So each is stopped first (SIGSTOP), and the scan
// repeats until two in a row are quiet; then every one found is killed at once, and the whole is
// done again until a scan finds none. Again, because a stop does not hold: a fork under way when
// the stop came still makes its child, and when a member of an orphaned process group exits, the
// kernel continues every stopped member (SIGHUP, SIGCONT).
//
// A scan is quiet when it stops no marked process and no process new since the scan before
// ended before its environment could be read. That second half is what makes the chain
// visible: while it runs, each scan's list of /proc holds a member, which is either read, marked
// and stopped, or new and gone by the time it is read (its successor then came after the list).
func killMarked(marker string) {
	needle := []byte(markerVar + "=" + marker + "\x00")
	deadline := time.Now().Add(reapDeadline)
	known := map[int]bool{}
	for {
		found := map[int]bool{}
		for quiet := 0; quiet < 2; {
			busy, ok := stopMarked(needle, found, known)
			if !ok || time.Now().After(deadline) {
				break
			}
			if busy == 0 {
				quiet++
			} else {
				quiet = 0
			}
		}
		if len(found) == 0 {
			return
		}
		for pid := range found {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		// Killed, each still runs until it is scheduled to die.
		for pid := range found {
			for !ended("/proc/"+strconv.Itoa(pid)) && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		}
		if time.Now().After(deadline) {
			return
		}
	}
}

// stopMarked scans /proc once, newest PID first (a process forking in a loop is the newest). It
// sends SIGSTOP to every marked process not stopped yet and adds it to found; busy counts them,
// and the processes not in known (the scan before's) that ended before they could be read.
// known becomes this scan's list. ok is false where /proc cannot be read.
func stopMarked(needle []byte, found, known map[int]bool) (busy int, ok bool) {
	dir, err := os.Open("/proc")
	if err != nil {
		return 0, false
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return 0, false
	}
	pids := make([]int, 0, len(names))
	self := os.Getpid()
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil && pid != self {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	slices.Reverse(pids)
	listed := map[int]bool{}
	for _, pid := range pids {
		listed[pid] = true
		p := "/proc/" + strconv.Itoa(pid)
		// A zombie's environment reads empty, as does a kernel thread's.
		data, err := os.ReadFile(p + "/environ")
		if err != nil || len(data) == 0 {
			if !known[pid] && ended(p) {
				busy++
			}
			continue
		}
		if !bytes.Contains(append(data, 0), needle) {
			continue
		}
		found[pid] = true
		if stopped(p) {
			continue
		}
		busy++
		_ = syscall.Kill(pid, syscall.SIGSTOP)
	}
	clear(known)
	maps.Copy(known, listed)
	return busy, true
}

// procState is the state letter of the process at p (/proc/PID), 0 when it is gone.
func procState(p string) byte {
	stat, err := os.ReadFile(p + "/stat")
	if err != nil {
		return 0
	}
	// The state follows the command's name, which is in parentheses and may hold anything.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 || i+2 >= len(stat) {
		return '?'
	}
	return stat[i+2]
}

// ended says the process at p has exited: a zombie, or gone.
func ended(p string) bool {
	switch procState(p) {
	case 0, 'Z', 'X', 'x':
		return true
	}
	return false
}

// stopped says the process at p is stopped, or has ended.
func stopped(p string) bool {
	switch procState(p) {
	case 'T', 't', 0, 'Z', 'X', 'x':
		return true
	}
	return false
}

// newMarker is the marker of a command this process starts: its pid and start time, which say
// later whether it still runs (a pid alone is soon another process's), and a random part that
// tells its commands apart: "PID-START-RANDOM".
func newMarker() string {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	return fmt.Sprintf("%d-%s-%s", os.Getpid(), startTime(os.Getpid()), hex.EncodeToString(id))
}

// markerOwner reads the pid and start time of the locum a marker names.
func markerOwner(marker string) (pid int, start string, ok bool) {
	p, rest, ok1 := strings.Cut(marker, "-")
	start, _, ok2 := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(p)
	if !ok1 || !ok2 || err != nil || pid <= 0 || start == "" {
		return 0, "", false
	}
	return pid, start, true
}

// startTime is when the process pid started, in clock ticks since boot (the 22nd field of
// /proc/PID/stat); "?" where it cannot be read, and "" when the process is gone or has ended.
func startTime(pid int) string {
	p := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(p + "/stat")
	if err != nil {
		if _, err := os.Stat("/proc/self/stat"); err != nil {
			return "?"
		}
		return ""
	}
	// The fields after the command's name, which is in parentheses and may hold anything: the
	// state is the first, the start time the twentieth.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return "?"
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return "?"
	}
	switch fields[0] {
	case "Z", "X", "x":
		return ""
	}
	return fields[19]
}

// ownerGone says the locum a marker names no longer runs: its pid is gone, has ended, or is
// another process's (a start time of its own). A marker that names no locum is not gone.
func ownerGone(marker string) bool {
	pid, start, ok := markerOwner(marker)
	if !ok || start == "?" {
		return false
	}
	now := startTime(pid)
	return now != "?" && now != start
}

// ReapOrphans ends what the commands of a killed locum left running. A locum killed by SIGKILL
// (or a crash) has no time to end its verify; in its sandbox the verify dies with it, but in a
// process group (sandbox none) it runs on, and could write the file the next start restores
// after it is restored. So before restoring, recovery ends every process whose marker names a
// locum that no longer runs (frozen, then killed, see killMarked), and, where cgroups hold the
// verifies, every process in the cgroup of one beside this process's own.
func ReapOrphans() {
	for _, marker := range orphanMarkers() {
		killMarked(marker)
	}
	killOrphanCgroups()
}

// orphanMarkers are the markers in the environments of this user's processes (every process's,
// for root) whose locum no longer runs.
func orphanMarkers() []string {
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return nil
	}
	prefix := []byte(markerVar + "=")
	var orphans []string
	for _, n := range names {
		if _, err := strconv.Atoi(n); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil {
			continue
		}
		// A verify that runs locum carries its own marker and each of the locums' above it.
		for kv := range bytes.SplitSeq(data, []byte{0}) {
			if m, ok := bytes.CutPrefix(kv, prefix); ok && !slices.Contains(orphans, string(m)) && ownerGone(string(m)) {
				orphans = append(orphans, string(m))
			}
		}
	}
	return orphans
}
