package transform

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// The guard is taken before the baseline, of the bytes scope read: a file written between the
// read and the guard is refused before any verify runs, and left as it was then.
func TestGuardRefusesAFileChangedAfterItWasRead(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	root := t.TempDir()
	file := filepath.Join(root, "a.txt")
	require.NoError(t, os.WriteFile(file, []byte("a\n"), 0o644))

	steps := Steps(Options{File: "a.txt", Verify: "touch verified", Task: "make it b", Cwd: root, Root: root})
	i := slices.IndexFunc(steps, func(s engine.Step) bool { return s.Name == "guard" })
	require.Positive(t, i)
	require.Less(t, i, slices.IndexFunc(steps, func(s engine.Step) bool { return s.Name == "baseline" }), "the guard comes before the baseline")
	write := engine.Step{Name: "someone-else", Run: func(context.Context, *engine.Run) error {
		return os.WriteFile(file, []byte("someone else's\n"), 0o644)
	}}
	steps = slices.Insert(steps, i, write)

	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.SettingsFor(t, s.BaseURL()), Model: runtest.Model, Routing: "operator",
		JournalPath: filepath.Join(root, "run.jsonl")}
	res := engine.Execute(context.Background(), spec, steps)
	require.NotNil(t, res.Error)
	assert.Equal(t, "bad_input", res.Error.Kind)
	assert.Contains(t, res.Error.Message, "a.txt changed while locum read it")
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	assert.Equal(t, "someone else's\n", string(data))
	assert.NoFileExists(t, filepath.Join(root, "verified"), "no verify ran")
	assert.Empty(t, s.RequestsTo("/v1/chat/completions"))
}
