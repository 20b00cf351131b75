package hostusage

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/untrusted"
)

// Limits bound a reading: a folder of transcripts is the host's, and what its lines say came
// from a model and the tools it ran.
type Limits struct {
	// Files is how many files are read at most, the newest first; Depth how deep under the
	// folder a file may be.
	Files int
	Depth int
	// FileBytes is the largest file read; Bytes the most read over all files.
	FileBytes int64
	Bytes     int64
	// LineBytes is the longest line read: a longer one is skipped.
	LineBytes int
	// Requests is how many requests are kept over all files.
	Requests int
}

// DefaultLimits are the ceilings of a reading: far above a real folder's (a long session is tens
// of megabytes, a line a few: a pasted image), far below what would hurt.
func DefaultLimits() Limits {
	return Limits{Files: 20000, Depth: 8, FileBytes: 512 << 20, Bytes: 4 << 30, LineBytes: 16 << 20, Requests: 500000}
}

// Options say what to read of a folder.
type Options struct {
	// Limits; the zero value is DefaultLimits.
	Limits Limits
	// Since passes over the files last written before it: they cannot hold the result of a run
	// that started later.
	Since time.Time
}

// Read reads the transcripts under dir. An error is the folder itself: missing, not a folder,
// unreadable. Whatever is wrong inside it is skipped and counted in Left.
func Read(dir string, o Options) (*Transcripts, error) {
	if o.Limits == (Limits{}) {
		o.Limits = DefaultLimits()
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return nil, fmt.Errorf("host transcripts: %w", err)
	}
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("host transcripts: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("host transcripts: %s is not a folder", untrusted.Escape(dir))
	}
	r := newReader(o.Limits)
	files := r.list(root, o)
	for i, f := range files {
		r.readFile(i, f)
	}
	return r.finish(), nil
}

// file is one transcript to read.
type file struct {
	path  string
	size  int64
	mtime time.Time
}

// list finds the transcripts under root: the files named *.jsonl, regular, inside root after
// symbolic links, within the limits; in the order of their paths, so that a session's own file
// comes before its subagents'.
func (r *reader) list(root string, o Options) []file {
	var files []file
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			r.left.Files++
			if d != nil && d.IsDir() && path != root {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, path); path != root && strings.Count(rel, string(filepath.Separator)) >= r.lim.Depth {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(d.Name(), ".jsonl") {
			return nil
		}
		real := path
		if d.Type()&fs.ModeSymlink != 0 {
			// A link is read only where it leads inside the folder.
			if real, err = untrusted.Confine(root, path); err != nil {
				r.left.Files++
				return nil
			}
		}
		st, err := os.Stat(real)
		switch {
		case err != nil || !st.Mode().IsRegular() || st.Size() > r.lim.FileBytes:
			r.left.Files++
		case st.ModTime().Before(o.Since):
			r.older++
		default:
			files = append(files, file{path: real, size: st.Size(), mtime: st.ModTime()})
		}
		return nil
	})
	// The newest files are read first within the limits: they hold the runs a ledger shows.
	sort.SliceStable(files, func(i, j int) bool { return files[i].mtime.After(files[j].mtime) })
	var total int64
	kept := files[:0]
	for _, f := range files {
		if len(kept) >= r.lim.Files || total+f.size > r.lim.Bytes {
			r.left.Files++
			continue
		}
		total += f.size
		kept = append(kept, f)
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].path < kept[j].path })
	return kept
}

// readFile reads one transcript, checked again as it is opened.
func (r *reader) readFile(index int, f file) {
	fh, err := untrusted.Open(f.path)
	if err != nil {
		r.left.Files++
		return
	}
	defer fh.Close()
	if err := r.lines(index, io.LimitReader(fh, r.lim.FileBytes)); err != nil {
		r.left.Files++
	}
	r.files++
}

// lines reads one file's lines: each under the line ceiling, a longer one skipped whole.
func (r *reader) lines(index int, in io.Reader) error {
	r.beginFile(index)
	lr := lineReader{r: bufio.NewReaderSize(in, 64<<10), max: r.lim.LineBytes}
	for {
		line, long, err := lr.next()
		if long {
			r.left.LongLines++
		} else if line != nil {
			r.line(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// lineReader reads lines of at most max bytes, skipping a longer one without keeping it.
type lineReader struct {
	r   *bufio.Reader
	max int
	buf []byte
}

// next returns the next line without its line ending; long when it was over max (line is then
// nil); err io.EOF with the last line, or after it.
func (lr *lineReader) next() (line []byte, long bool, err error) {
	lr.buf = lr.buf[:0]
	for {
		frag, err := lr.r.ReadSlice('\n')
		if !long && len(lr.buf)+len(frag) > lr.max+1 {
			long, lr.buf = true, lr.buf[:0]
		}
		if !long {
			lr.buf = append(lr.buf, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if long {
			return nil, true, err
		}
		if len(lr.buf) == 0 && err != nil {
			return nil, false, err
		}
		b := lr.buf
		if n := len(b); n > 0 && b[n-1] == '\n' {
			b = b[:n-1]
		}
		if n := len(b); n > 0 && b[n-1] == '\r' {
			b = b[:n-1]
		}
		if len(b) > lr.max {
			return nil, true, err
		}
		return b, false, err
	}
}
