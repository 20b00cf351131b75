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
// bits included), the owner, and the extended attributes. UID -1 leaves the owner to whoever
// writes the file.
type Meta struct {
	Mode fs.FileMode
	UID  int
	GID  int
	// Xattrs, when not nil, are the extended attributes the file ends with, as ReadXattrs found
	// them (an empty map: none); nil leaves them as the write finds them. Those this user may
	// not set are skipped (see setXattrs).
	Xattrs map[string][]byte
}

// Write writes content to path with mode, through a temporary file in the same directory that is
// synced and then renamed over path.
func Write(path string, content []byte, mode fs.FileMode) error {
	return WriteMeta(path, content, Meta{Mode: mode, UID: -1, GID: -1})
}

// WriteMeta is Write that also gives the file meta's owner and extended attributes. A chown that
// fails is an error only for root: anyone else can only keep their own files theirs, and a group
// they are not in is refused, which is not worth failing a restore for.
//
// The file is a new inode: a hard link to the old one keeps the old bytes (WriteInPlace keeps
// the inode).
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
	if err := finish(tmp, meta); err != nil {
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

// finish gives an open file meta's owner, extended attributes and mode, in that order: chown
// clears the setuid and setgid bits and a file capability (security.capability), so the
// attributes and the mode come after it; the mode comes last, since setting an ACL
// (system.posix_acl_access) rewrites the group bits.
func finish(f *os.File, meta Meta) error {
	if meta.UID >= 0 {
		if err := f.Chown(meta.UID, meta.GID); err != nil && os.Geteuid() == 0 {
			return err
		}
	}
	if meta.Xattrs != nil {
		if err := setXattrs(f, meta.Xattrs); err != nil {
			return err
		}
	}
	return f.Chmod(meta.Mode)
}
