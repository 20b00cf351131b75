package rails

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckBudget(t *testing.T) {
	require.NoError(t, CheckBudget("prompt", 10, 10))
	err := CheckBudget("prompt", 40000, 32768)
	var be *BudgetError
	require.True(t, errors.As(err, &be))
	assert.Contains(t, err.Error(), "prompt is 40000 bytes, over the input budget of 32768 bytes")
	assert.Contains(t, err.Error(), "--lines A-B")
}

func TestReadTextFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, data, 0o644))
		return p
	}
	ok := write("ok.go", []byte("package x // é\n"))
	big := write("big.txt", []byte(strings.Repeat("a", 100)))
	bin := write("bin", []byte("ab\x00cd"))
	latin := write("latin1.txt", []byte("caf\xe9\n"))
	require.NoError(t, os.Symlink(ok, filepath.Join(dir, "link.go")))
	require.NoError(t, os.Symlink(filepath.Join(dir, "nowhere"), filepath.Join(dir, "dangling")))

	data, err := ReadTextFile(ok, 100)
	require.NoError(t, err)
	assert.Equal(t, "package x // é\n", string(data))
	_, err = ReadTextFile(filepath.Join(dir, "link.go"), 100)
	require.NoError(t, err)

	var be *BudgetError
	_, err = ReadTextFile(big, 99)
	require.True(t, errors.As(err, &be))
	assert.Equal(t, int64(100), be.Size)
	_, err = ReadTextFile(big, 0)
	require.NoError(t, err)

	cases := map[string]string{
		bin:                            "binary (a NUL byte at offset 2)",
		latin:                          "not UTF-8 (an invalid byte at offset 3)",
		dir:                            "not a regular file",
		filepath.Join(dir, "none"):     "no such file",
		filepath.Join(dir, "dangling"): "symbolic link to nothing",
	}
	for path, want := range cases {
		_, err := ReadTextFile(path, 1000)
		var fe *FileError
		require.True(t, errors.As(err, &fe), path)
		assert.Contains(t, fe.Error(), want)
	}
}
