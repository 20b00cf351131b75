package rails

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadTextTail(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
		return p
	}
	five := write("five.log", "one\ntwo\nthree\nfour\nfive\n")
	open := write("open.log", "one\ntwo\nthree")
	long := write("long.log", "a\n"+strings.Repeat("x", 50)+"\nb\n")
	empty := write("empty.log", "")
	for _, tc := range []struct {
		name         string
		path         string
		n            int
		limit        int64
		data         string
		first, lines int
		cut          bool
	}{
		{"every line", five, 0, 100, "one\ntwo\nthree\nfour\nfive\n", 1, 5, false},
		{"the last two", five, 2, 100, "four\nfive\n", 4, 5, false},
		{"more than the file has", five, 9, 100, "one\ntwo\nthree\nfour\nfive\n", 1, 5, false},
		{"the last two, exactly at the limit", five, 2, 10, "four\nfive\n", 4, 5, false},
		{"three asked, two fit", five, 3, 10, "four\nfive\n", 4, 5, true},
		{"the whole file over the limit", five, 0, 16, "three\nfour\nfive\n", 3, 5, true},
		{"no bound", five, 0, 0, "one\ntwo\nthree\nfour\nfive\n", 1, 5, false},
		{"a last line with no ending", open, 1, 100, "three", 3, 3, false},
		{"a last line with no ending, cut", open, 0, 9, "two\nthree", 2, 3, true},
		{"a long line stops the tail", long, 3, 10, "b\n", 3, 3, true},
		{"the last line alone over the limit", long, 0, 1, "", 4, 3, true},
		{"an empty file", empty, 5, 10, "", 1, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadTextTail(tc.path, tc.n, tc.limit)
			require.NoError(t, err)
			assert.Equal(t, tc.data, string(got.Data))
			assert.Equal(t, tc.first, got.First, "first")
			assert.Equal(t, tc.lines, got.Lines, "lines")
			assert.Equal(t, tc.cut, got.Cut, "cut")
			st, err := os.Stat(tc.path)
			require.NoError(t, err)
			assert.Equal(t, st.Size(), got.Size)
		})
	}
}

// Only the lines read are text: a binary head is counted and left alone, a binary tail refused
// with the file's own offset.
func TestReadTextTailChecksWhatItReads(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mixed.log")
	require.NoError(t, os.WriteFile(p, []byte("\x00\xff\nok\n"), 0o644))
	got, err := ReadTextTail(p, 1, 100)
	require.NoError(t, err)
	assert.Equal(t, "ok\n", string(got.Data))
	assert.Equal(t, 2, got.First)
	_, err = ReadTextTail(p, 2, 100)
	var fe *FileError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, "binary (a NUL byte at offset 0)", fe.Reason)
	require.NoError(t, os.WriteFile(p, []byte("ok\nbad \xe9\n"), 0o644))
	_, err = ReadTextTail(p, 1, 100)
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, "not UTF-8 (an invalid byte at offset 7)", fe.Reason)
}

// A FIFO is refused before it is opened, so it cannot block the read.
func TestReadTextTailRefusesWhatIsNoFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	for path, want := range map[string]string{fifo: "not a regular file", dir: "not a regular file", filepath.Join(dir, "none"): "no such file"} {
		_, err := ReadTextTail(path, 1, 100)
		var fe *FileError
		require.True(t, errors.As(err, &fe), path)
		assert.Contains(t, fe.Reason, want, path)
	}
}

// A remedy may name settings: each front end words them its own way.
func TestBudgetRemedyNamesSettings(t *testing.T) {
	err := &BudgetError{What: "build.log", Size: 90000, Limit: 32768, Remedy: "take its last lines with {tail} 400"}
	assert.Contains(t, err.Error(), "; take its last lines with --tail 400, or raise the budget")
	assert.Contains(t, err.Words(func(s string) string { return s }), "; take its last lines with tail 400, or raise")
}
