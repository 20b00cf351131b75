package rails

import (
	"bytes"
	"fmt"
	"io"
	"os"
)

// Tail is the end of a text file as ReadTextTail read it.
type Tail struct {
	// Data are the lines read, each with its own ending.
	Data []byte
	// First is the file's number of the first line read (1-based); Lines how many lines the file
	// has in all.
	First, Lines int
	// Size is the file's size in bytes.
	Size int64
	// Cut says the lines asked for are more than the limit: Data holds the last of them that fit
	// under it, none where the last line alone does not.
	Cut bool
}

// ReadTextTail reads the last n lines of a UTF-8 text file, or every line where n is 0, at most
// limit bytes of them (limit <= 0: no bound). The file's end is read back from its size on disk,
// so a log of any size is never loaded whole, and the lines before its end are counted, not kept
// or checked. Only the lines read are checked for text.
func ReadTextTail(path string, n int, limit int64) (Tail, error) {
	st, err := regularFile(path)
	if err != nil {
		return Tail{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return Tail{}, &FileError{Path: path, Reason: err.Error()}
	}
	defer f.Close()
	size := st.Size()
	w := size
	if limit > 0 {
		w = min(size, limit+1)
	}
	off := size - w
	// The byte before the window says whether the window starts a line.
	before := off - min(off, 1)
	buf := make([]byte, size-before)
	if k, err := f.ReadAt(buf, before); k < len(buf) {
		if err == nil || err == io.EOF {
			return Tail{}, &FileError{Path: path, Reason: "it changed while it was read"}
		}
		return Tail{}, &FileError{Path: path, Reason: err.Error()}
	}
	window := buf[off-before:]
	// starts are the offsets in window of the lines that start inside it.
	var starts []int
	for p := range window {
		if off+int64(p) == 0 || (p == 0 && buf[0] == '\n') || (p > 0 && window[p-1] == '\n') {
			starts = append(starts, p)
		}
	}
	// fit is how many of the last lines are at most limit bytes.
	fit := 0
	for fit < len(starts) && (limit <= 0 || int64(len(window)-starts[len(starts)-1-fit]) <= limit) {
		fit++
	}
	whole := off == 0 && (limit <= 0 || size <= limit)
	take := fit
	t := Tail{Size: size}
	switch {
	case n == 0:
		t.Cut = !whole
	case n <= fit:
		take = n
	default:
		// Fewer lines fit than asked for: the file holds no more than those, or they are too long.
		t.Cut = !whole
	}
	from := len(window)
	if take > 0 {
		from = starts[len(starts)-take]
	}
	t.Data = window[from:]
	if reason := textProblem(t.Data, off+int64(from)); reason != "" {
		return Tail{}, &FileError{Path: path, Reason: reason}
	}
	counted, err := countLines(f, off)
	if err != nil {
		return Tail{}, &FileError{Path: path, Reason: err.Error()}
	}
	t.First = counted + bytes.Count(window[:from], []byte{'\n'}) + 1
	t.Lines = counted + bytes.Count(window, []byte{'\n'})
	if size > 0 && buf[len(buf)-1] != '\n' {
		t.Lines++
	}
	return t, nil
}

// countLines counts the line feeds in the first n bytes of f, a block at a time.
func countLines(f *os.File, n int64) (int, error) {
	count := 0
	buf := make([]byte, 64<<10)
	r := io.NewSectionReader(f, 0, n)
	for {
		k, err := r.Read(buf)
		count += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return count, nil
		}
		if err != nil {
			return 0, fmt.Errorf("counting its lines: %w", err)
		}
	}
}
