package untrusted

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ConfigCap is the ceiling on a manifest, a workspace, a routing file, a record or the user
// config: far above any real one, far below what would hurt.
const ConfigCap = 1 << 20

// FileError is a file locum refuses to read: missing, not a regular file, a symbolic link out of
// its confinement, or unreadable. Callers treat it as bad input (exit 2).
type FileError struct {
	Path   string
	Reason string
	Err    error
}

func (e *FileError) Error() string { return Escape(e.Path) + ": " + e.Reason }
func (e *FileError) Unwrap() error { return e.Err }

// TooLargeError is input over its ceiling. It says what the ceiling is; the content is never
// echoed.
type TooLargeError struct {
	What  string
	Size  int64 // -1 when only "more than Limit" is known (a stream)
	Limit int64
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s is over %d bytes, the most locum reads of it", Escape(e.What), e.Limit)
	}
	return fmt.Sprintf("%s is %d bytes, over the %d bytes locum reads of it", Escape(e.What), e.Size, e.Limit)
}

// Open opens a regular file for reading: its type is checked before the open (a FIFO would block
// it) and again on the open file (it may have been swapped). The caller bounds what it reads.
func Open(path string) (*os.File, error) {
	st, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FileError{Path: path, Reason: "no such file", Err: err}
		}
		return nil, &FileError{Path: path, Reason: reason(err), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{Path: path, Reason: "not a regular file (" + kind(st.Mode()) + ")"}
	}
	// O_NONBLOCK: should a FIFO be swapped in after the check, the open still returns at once.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, &FileError{Path: path, Reason: reason(err), Err: err}
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, &FileError{Path: path, Reason: "not a regular file"}
	}
	return f, nil
}

// ReadFile reads a regular file of at most limit bytes. The file's type is checked before it is
// opened (a FIFO would block the open), checked again on the open file (it may have been swapped),
// and the read stops at limit+1 bytes (it may have grown). A symbolic link is followed; use
// ReadFileIn to confine one.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > limit {
		return nil, &TooLargeError{What: path, Size: st.Size(), Limit: limit}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &FileError{Path: path, Reason: reason(err), Err: err}
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: path, Size: -1, Limit: limit}
	}
	return data, nil
}

// ReadAll reads r to its end, refusing more than limit bytes without reading further.
func ReadAll(r io.Reader, what string, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: what, Size: -1, Limit: limit}
	}
	return data, nil
}

// Inside says path (absolute, or relative to root) lies inside root as written, before any
// symbolic link is resolved: Confine says where it leads.
func Inside(root, path string) bool {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	return err == nil && filepath.IsLocal(rel)
}

// ConfineError is a path that leads out of the directory it must stay in, after symbolic links.
type ConfineError struct {
	Path   string // as given
	Target string // where it leads
	Root   string
}

func (e *ConfineError) Error() string {
	return fmt.Sprintf("%s leads out of %s (to %s); locum reads only what is inside it", Escape(e.Path), Escape(e.Root), Escape(e.Target))
}

// Confine resolves path (absolute, or relative to root) with its symbolic links and returns it
// when it stays inside root, also resolved. A path that does not exist yet is resolved as far as
// it exists.
func Confine(root, path string) (string, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", &FileError{Path: root, Reason: reason(err), Err: err}
	}
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	real, err := resolveExisting(p)
	if err != nil {
		return "", &FileError{Path: path, Reason: reason(err), Err: err}
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || !filepath.IsLocal(rel) {
		return "", &ConfineError{Path: path, Target: real, Root: realRoot}
	}
	return real, nil
}

// resolveExisting resolves the symbolic links of the longest existing prefix of p.
func resolveExisting(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if _, lerr := os.Lstat(p); lerr == nil {
		// It exists but leads nowhere: a dangling link names nothing that can be confined.
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	dir, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, filepath.Base(p)), nil
}

// ReadFileIn reads root/rel (rel may also be absolute) as ReadFile does, refusing a path that
// leads out of root through a symbolic link.
func ReadFileIn(root, rel string, limit int64) ([]byte, error) {
	real, err := Confine(root, rel)
	if err != nil {
		return nil, err
	}
	data, err := ReadFile(real, limit)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = rel
	}
	var te *TooLargeError
	if errors.As(err, &te) {
		te.What = rel
	}
	return data, err
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "not a plain file"
}

func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
