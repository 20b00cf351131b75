package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// specDir is spec/, from this package.
const specDir = "../../../spec"

// The committed schemas and the table of step inputs in spec/pack.md are what the generator
// writes from the settings table and the modes' registrations today.
func TestCommittedFilesAreGenerated(t *testing.T) {
	files, err := generated(specDir)
	require.NoError(t, err)
	require.Len(t, files, 3)
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(specDir, f.name))
		require.NoError(t, err, "spec/%s: run `go generate ./...`", f.name)
		if !bytes.Equal(got, f.data) {
			t.Errorf("spec/%s is not what the settings table and the modes' registrations give: run `go generate ./...`", f.name)
		}
	}
}

// The table goes between its two lines, whatever stood there, and the rest of the note is kept;
// a note without them is refused rather than written whole.
func TestSplice(t *testing.T) {
	note := "# pack\n\ntext\n" + beginInputs + "| old |\n" + endInputs + "after\n"
	got, err := splice([]byte(note), "| new |\n")
	require.NoError(t, err)
	assert.Equal(t, "# pack\n\ntext\n"+beginInputs+"| new |\n"+endInputs+"after\n", string(got))
	for _, bad := range []string{"# pack\n", beginInputs, endInputs + beginInputs} {
		_, err := splice([]byte(bad), "| new |\n")
		assert.Error(t, err, bad)
	}
}
