package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// What a write cannot give a file: an attribute whose namespace this user may not write
// (security.* without the privilege, security.capability without CAP_SETFCAP, trusted.* for
// anyone but root, who alone can list them) is skipped, and so is every attribute on a file
// system that keeps none. Access control lists are attributes (system.posix_acl_access and
// system.posix_acl_default), so they are kept.

// ReadXattrs returns the extended attributes of the open file f by name: an empty map where
// it has none, or where its file system keeps none.
func ReadXattrs(f *os.File) (map[string][]byte, error) {
	fd := int(f.Fd())
	names, err := listXattrs(fd)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, name := range names {
		v, err := getXattr(fd, name)
		if errors.Is(err, unix.ENODATA) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, fmt.Errorf("reading the extended attribute %s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

func listXattrs(fd int) ([]string, error) {
	for {
		n, err := unix.Flistxattr(fd, nil)
		if unsupported(err) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("listing extended attributes: %w", err)
		}
		if n == 0 {
			return nil, nil
		}
		buf := make([]byte, n)
		n, err = unix.Flistxattr(fd, buf)
		if errors.Is(err, unix.ERANGE) {
			continue // grew between the two calls
		}
		if err != nil {
			return nil, fmt.Errorf("listing extended attributes: %w", err)
		}
		var names []string
		for _, b := range bytes.Split(buf[:n], []byte{0}) {
			if len(b) > 0 {
				names = append(names, string(b))
			}
		}
		return names, nil
	}
}

func getXattr(fd int, name string) ([]byte, error) {
	for {
		n, err := unix.Fgetxattr(fd, name, nil)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, n)
		if n == 0 {
			return buf, nil
		}
		n, err = unix.Fgetxattr(fd, name, buf)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return buf[:n], nil
	}
}

// setXattrs makes want the open file's extended attributes: each set, and each other one the
// file has removed (a directory's default ACL can give a new file one the original lacked).
func setXattrs(f *os.File, want map[string][]byte) error {
	fd := int(f.Fd())
	have, err := listXattrs(fd)
	if err != nil {
		return err
	}
	for _, name := range have {
		if _, ok := want[name]; ok {
			continue
		}
		if err := unix.Fremovexattr(fd, name); err != nil && !refused(err) && !errors.Is(err, unix.ENODATA) {
			return fmt.Errorf("removing the extended attribute %s: %w", name, err)
		}
	}
	for name, v := range want {
		if err := unix.Fsetxattr(fd, name, v, 0); err != nil && !refused(err) {
			return fmt.Errorf("setting the extended attribute %s: %w", name, err)
		}
	}
	return nil
}

// refused is an attribute this user may not write, or one the file system does not keep.
func refused(err error) bool {
	return errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) || unsupported(err)
}

func unsupported(err error) bool {
	return errors.Is(err, unix.ENOTSUP) || errors.Is(err, unix.EOPNOTSUPP)
}
