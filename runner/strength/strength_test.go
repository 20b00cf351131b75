package strength

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
)

const clamp = `package calc

// Clamp holds v between lo and hi.
func Clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
`

// measureIn runs Measure in a run of its own over a tree holding calc.go, with verify.
func measureIn(t testing.TB, verify string, max int, files map[string]string) (Result, error) {
	root := t.TempDir()
	for name, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(text), 0o644))
	}
	var res Result
	var err error
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(t, "transform", map[string]string{"sandbox": "none"}), Model: "m", Routing: "operator"}
	engine.Execute(context.Background(), spec, []engine.Step{{Name: "measure", Run: func(ctx context.Context, r *engine.Run) error {
		res, err = Measure(ctx, r, Options{Verify: verify, Root: root, Max: max, Spans: []Span{{File: filepath.Join(root, "calc.go"), Text: []byte(files["calc.go"]), Start: 3, End: 12}}})
		return err
	}}})
	return res, err
}

// Each outcome of a measure, and the words and figures it gives.
func TestMeasure(t *testing.T) {
	for _, tc := range []struct {
		name, verify string
		files        map[string]string
		want         string
		blind, shown bool
		words        string
	}{
		{"a verify that checks nothing", "true", map[string]string{"calc.go": clamp}, "0/4", true, false, "the verify passed all 4 changes"},
		{"a verify that sees every change", `test "$(sha256sum < calc.go)" = "` + sum(clamp) + `"`, map[string]string{"calc.go": clamp}, "4/4", false, true, "the verify rejected all 4 changes"},
		{"a verify that sees one line: it stops once the verdict is clear", `grep -q "if v > hi {" calc.go`, map[string]string{"calc.go": clamp}, "1/2", false, false, `the verify rejected 1 of 2 changes locum made to the span; it passed: line 5: "v < lo" to "!(v < lo)"`},
		{"a span of comments only", "true", map[string]string{"calc.go": "package calc\n\n// one\n// two\n// three\n// four\n// five\n// six\n// seven\n// eight\n// nine\n// ten\n"}, "0/0", true, false, "no change to the span could be made"},
		{"a verify that fails in the copy", "false", map[string]string{"calc.go": clamp}, "?", true, false, "it does not pass in a copy of the tree without its git directories: exit 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := measureIn(t, tc.verify, 4, tc.files)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.String())
			assert.Equal(t, tc.blind, res.Blind())
			assert.Equal(t, tc.shown, res.Shown())
			assert.Contains(t, res.Words("read the diff"), tc.words)
		})
	}
}

// The copy holds the tree but for its git directory: a verify run there never reaches it.
func TestMeasureLeavesTheGitDirectoryOut(t *testing.T) {
	res, err := measureIn(t, "test ! -e .git && test -f sub/x.txt", 2, map[string]string{"calc.go": clamp, ".git/HEAD": "ref: refs/heads/main\n", "sub/x.txt": "x"})
	require.NoError(t, err)
	assert.Equal(t, "0/2", res.String(), "the verify passed in the copy: no .git there, the rest is")
}

// A context that ends stops the measure with its cause, as any stopped run.
func TestMeasureStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte(clamp), 0o644))
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(t, "transform", map[string]string{"sandbox": "none"}), Model: "m", Routing: "operator"}
	started := filepath.Join(t.TempDir(), "started")
	var err error
	go func() {
		for {
			if _, e := os.Stat(started); e == nil {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	engine.Execute(ctx, spec, []engine.Step{{Name: "measure", Run: func(ctx context.Context, r *engine.Run) error {
		_, err = Measure(ctx, r, Options{Verify: "touch " + started + "; sleep 30", Root: root, Max: 4, Spans: []Span{{File: filepath.Join(root, "calc.go"), Text: []byte(clamp), Start: 3, End: 12}}})
		return err
	}}})
	require.ErrorIs(t, err, context.Canceled)
}

// sum is what sha256sum prints for s on its standard input.
func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:]) + "  -"
}

// BenchmarkMeasure is what the measure adds to a kept edit, against one run of the same verify:
// docs/performance.md quotes the ratio. The verify is a check of the file's every byte, in the sandbox
// where there is one; the run's own setting up is in both.
func BenchmarkMeasure(b *testing.B) {
	verify := `test "$(sha256sum < calc.go)" = "` + sum(clamp) + `"`
	b.Run("verify", func(b *testing.B) {
		root := b.TempDir()
		require.NoError(b, os.WriteFile(filepath.Join(root, "calc.go"), []byte(clamp), 0o644))
		spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(b, "transform", nil), Model: "m", Routing: "operator"}
		for b.Loop() {
			engine.Execute(context.Background(), spec, []engine.Step{{Name: "verify", Run: func(ctx context.Context, r *engine.Run) error {
				_, err := r.Verify(ctx, verify, root)
				return err
			}}})
		}
	})
	b.Run("measure", func(b *testing.B) {
		root := b.TempDir()
		require.NoError(b, os.WriteFile(filepath.Join(root, "calc.go"), []byte(clamp), 0o644))
		spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(b, "transform", nil), Model: "m", Routing: "operator"}
		for b.Loop() {
			engine.Execute(context.Background(), spec, []engine.Step{{Name: "measure", Run: func(ctx context.Context, r *engine.Run) error {
				res, err := Measure(ctx, r, Options{Verify: verify, Root: root, Max: 4, Spans: []Span{{File: filepath.Join(root, "calc.go"), Text: []byte(clamp), Start: 3, End: 12}}})
				if err == nil && res.String() != "4/4" {
					b.Fatalf("measured %s", res)
				}
				return err
			}}})
		}
	})
}

// Several spans, in several files: the mutants are taken from each in turn and name their file,
// and each file is as kept again before a mutant of another: a verify of one file sees no mutant
// of the other.
func TestMeasureSeveralSpans(t *testing.T) {
	root := t.TempDir()
	b := "package calc\n\n// Twice doubles v.\nfunc Twice(v int) int {\n\treturn v * 2\n}\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte(clamp), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "b.go"), []byte(b), 0o644))
	spec := engine.RunSpec{Mode: "transform", Root: root, Settings: runtest.Settings(t, "transform", map[string]string{"sandbox": "none"}), Model: "m", Routing: "operator"}
	var res Result
	var err error
	verify := `test "$(sha256sum < calc.go)" = "` + sum(clamp) + `" || test "$(sha256sum < b.go)" = "` + sum(b) + `"`
	engine.Execute(context.Background(), spec, []engine.Step{{Name: "measure", Run: func(ctx context.Context, r *engine.Run) error {
		res, err = Measure(ctx, r, Options{Verify: verify, Root: root, Max: 4, Spans: []Span{
			{File: filepath.Join(root, "calc.go"), Text: []byte(clamp), Start: 3, End: 12},
			{File: filepath.Join(root, "b.go"), Text: []byte(b), Start: 3, End: 6}}})
		return err
	}}})
	require.NoError(t, err)
	// Each mutant leaves the other file as kept, which this verify passes: none is rejected.
	assert.Equal(t, "0/4", res.String())
	require.Len(t, res.Survivors, 4)
	assert.Regexp(t, `^calc.go line `, res.Survivors[0])
	assert.Regexp(t, `^b.go line `, res.Survivors[1])
	assert.Regexp(t, `^calc.go line `, res.Survivors[2])
}
