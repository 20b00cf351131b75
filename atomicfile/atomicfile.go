// Package atomicfile replaces a file's content so that a reader, or the next start after a
// crash, finds the old bytes or the new ones, never a mix or an empty file. It imports nothing of
// locum's, so every package that writes a file a person keeps can use the one writer.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Meta is what a write gives the file besides its bytes: the mode (setuid, setgid and sticky
// bits included) and the owner. UID -1 leaves the owner to whoever writes the file.
type Meta struct {
	Mode fs.FileMode
	UID  int
	GID  int
}

// Write writes content to path with mode, through a temporary file in the same directory that is
// synced and then renamed over path.
func Write(path string, content []byte, mode fs.FileMode) error {
	return WriteMeta(path, content, Meta{Mode: mode, UID: -1, GID: -1})
}

// WriteMeta is Write that also gives the file meta's owner. A chown that fails is an error only
// for root: anyone else can only keep their own files theirs, and a group they are not in is
// refused, which is not worth failing a restore for.
func WriteMeta(path string, content []byte, meta Meta) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".locum-*")
	if err != nil {
		return err
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return err
	}
	if _, err := tmp.Write(content); err != nil {
		return fail(err)
	}
	// The owner first: chown clears the setuid and setgid bits the chmod then sets.
	if meta.UID >= 0 {
		if err := tmp.Chown(meta.UID, meta.GID); err != nil && os.Geteuid() == 0 {
			return fail(err)
		}
	}
	if err := tmp.Chmod(meta.Mode); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return err
	}
	return nil
}
