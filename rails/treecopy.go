//go:build unix

package rails

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/locumdev/locum/untrusted"
)

// The bounds of a scratch copy of a tree (CopyTree): a repository past them is not copied, and
// whatever needed the copy says why rather than running in the person's tree.
var (
	copyTreeEntries = 200_000
	copyTreeBytes   = int64(512 << 20)
)

// CopyTooLargeError is a tree past CopyTree's bounds.
type CopyTooLargeError struct {
	Tree  string
	Limit int64
	What  string // "entries", "bytes"
}

func (e *CopyTooLargeError) Error() string {
	return fmt.Sprintf("the tree %s holds more than %d %s, more than locum copies to a scratch directory", untrusted.Escape(e.Tree), e.Limit, e.What)
}

// CopyTree copies the tree src into dst, an empty directory, for a command that must not run in
// src: regular files with their permission bits, directories, and symbolic links as links (a
// sandbox keeps src itself read-only however a link leads there). Every entry named .git (a git
// directory, file or link, at any depth) and every special file is left out, so nothing run in
// the copy reaches a git directory of src. A tree past the bounds is a *CopyTooLargeError; what
// was copied stays for the caller to remove.
func CopyTree(src, dst string) error {
	entries := 0
	var bytes int64
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if d.Name() == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if entries++; entries > copyTreeEntries {
			return &CopyTooLargeError{Tree: src, Limit: int64(copyTreeEntries), What: "entries"}
		}
		target := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(target, 0o755)
		case t == fs.ModeSymlink:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			if bytes += info.Size(); bytes > copyTreeBytes {
				return &CopyTooLargeError{Tree: src, Limit: copyTreeBytes, What: "bytes"}
			}
			return copyTreeFile(path, target, info.Mode().Perm())
		}
		return nil
	})
}

// copyTreeFile copies the regular file src to dst, opened without following a link: src was a
// regular file when the walk listed it, and a link put in its place since is not followed.
func copyTreeFile(src, dst string, perm fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	if st, err := in.Stat(); err != nil || !st.Mode().IsRegular() {
		return fmt.Errorf("%s is no longer a regular file", untrusted.Escape(src))
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm|0o200)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	err = errors.Join(err, out.Close())
	if err == nil && perm&0o200 == 0 {
		err = os.Chmod(dst, perm)
	}
	return err
}

// RemoveScratch removes a scratch directory whatever a command left in it, a directory it made
// unwritable included.
func RemoveScratch(dir string) error { return forceRemove(dir) }
