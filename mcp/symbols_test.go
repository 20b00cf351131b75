package mcp

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/symbols"
)

// The symbols tool lists what --symbol finds, as locum symbols --json does; a file it cannot list
// says why in its entry, the others listed still, and the call is an error.
func TestSymbolsTool(t *testing.T) {
	f := newFixture(t, false)
	res, err := f.call(t, context.Background(), "symbols", map[string]any{"files": []any{"calc.go"}}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "calc.go: 1 declarations (structuredContent)", text(res))
	file := structured(t, res)["files"].([]any)[0].(map[string]any)
	assert.Equal(t, "Go", file["language"])
	assert.Equal(t, []any{map[string]any{"name": "Add", "kind": "function", "start": 3.0, "end": 5.0, "item": true}}, file["symbols"])

	require.NoError(t, os.WriteFile(filepath.Join(f.root, "bad.py"), []byte("def f(:\n"), 0o644))
	outside := filepath.Join(t.TempDir(), "outside.go")
	require.NoError(t, os.WriteFile(outside, []byte(calc), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(f.root, "link.go")))
	res, err = f.call(t, context.Background(), "symbols", map[string]any{"files": []any{"calc.go", "bad.py", "link.go"}}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	files := structured(t, res)["files"].([]any)
	require.Len(t, files, 3)
	kind := func(i int) any { return files[i].(map[string]any)["error"].(map[string]any)["kind"] }
	if symbols.CgoBuild {
		assert.Equal(t, "syntax", kind(1))
		assert.Contains(t, text(res), `bad.py does not parse as Python (line 1:7: missing ")")`)
	} else {
		assert.Equal(t, "no_cgo", kind(1))
	}
	assert.Equal(t, "unreadable", kind(2))
	assert.Contains(t, text(res), "link.go: a symbolic link out of the repository")

	// Over the input budget the operator set, a file is refused as a prompt holding it would be.
	f.env["LOCUM_MAX_INPUT_BYTES"] = "20"
	res, err = f.call(t, context.Background(), "symbols", map[string]any{"files": []any{"calc.go"}}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "calc.go is 55 bytes, over the input budget of 20 bytes (`max_input_bytes`)")

	res, err = f.call(t, context.Background(), "symbols", map[string]any{"files": []any{}}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "files is empty")
}
