//go:build unix

package rails

import (
	"bytes"
	"maps"
	"os"
	"slices"
	"strconv"
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
