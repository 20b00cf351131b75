package rails

import (
	"fmt"

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
