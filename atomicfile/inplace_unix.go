//go:build unix

package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotSame is a WriteInPlace that found another file at the path than the one it was to write.
var ErrNotSame = errors.New("the path holds another file than the one to write")

// WriteInPlace writes content into the file at path itself, keeping its inode: every hard link
// to it sees the new bytes, and what the inode carries stays with it. same says whether the
// file opened is the one meant (its device and inode, say); if not, nothing is written and the
// error is ErrNotSame. The file is truncated to content, given meta's owner, attributes and
// mode, and synced.
//
// It is not atomic: a crash mid-write leaves a mix of old and new bytes. Use it only where
// something else can put the file back after a crash (a crash record and its synced copy).
func WriteInPlace(path string, content []byte, meta Meta, same func(fs.FileInfo) bool) error {
	f, err := openSame(path, os.O_WRONLY, same)
	if errors.Is(err, fs.ErrPermission) {
		// A file without its owner's write bit: the owner may still give it one for the write,
		// through a read-only descriptor of the same file; finish sets the mode after.
		f, err = openAfterChmod(path, same)
	}
	if err != nil {
		return err
	}
	fail := func(err error) error {
		f.Close()
		return err
	}
	if _, err := f.WriteAt(content, 0); err != nil {
		return fail(err)
	}
	if err := f.Truncate(int64(len(content))); err != nil {
		return fail(err)
	}
	if err := finish(f, meta); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	return f.Close()
}

// openSame opens path without following a link and without blocking on a FIFO, and only if
// it is a regular file that same accepts.
func openSame(path string, flag int, same func(fs.FileInfo) bool) (*os.File, error) {
	f, err := os.OpenFile(path, flag|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() || !same(st) {
		f.Close()
		return nil, ErrNotSame
	}
	return f, nil
}

func openAfterChmod(path string, same func(fs.FileInfo) bool) (*os.File, error) {
	r, err := openSame(path, os.O_RDONLY, same)
	if err != nil {
		return nil, err
	}
	st, err := r.Stat()
	if err == nil {
		err = r.Chmod(st.Mode().Perm() | 0o200)
	}
	r.Close()
	if err != nil {
		return nil, err
	}
	return openSame(path, os.O_WRONLY, same)
}
