package engine

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
)

// TestMeasureHandoff measures a handoff's use on the file afterwards: its new lines there, or not
// there after an edit, or the file as the run left it.
func TestMeasureHandoff(t *testing.T) {
	const before = "package calc\n\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"
	const attempt = "package calc\n\nfunc Add(a, b int) int {\n\tsum := a + b\n\treturn sum\n}\n"
	applied, err := runtest.ApplyDiff(UnifiedDiff("calc.go", before, attempt), before)
	require.NoError(t, err)
	require.Equal(t, attempt, applied, "the diff applied is the attempt")
	f := HandoffFileOf("calc.go", []byte(before), []byte(attempt))
	require.Len(t, f.Added, 2, "the lines new to the file: sum := a + b, return sum")
	for _, tc := range []struct {
		name  string
		file  *string // nil: no file
		files []HandoffFile
		want  HandoffUse
	}{
		{"the diff applied", new(applied), nil, HandoffUse{Use: HandoffUsed, Present: 2, Of: 2}},
		{"one of its two lines, reindented", new("package calc\n\nfunc Add(a, b int) int {\n    sum := a + b\n\treturn a - b + 0\n}\n"), nil, HandoffUse{Use: HandoffUsed, Present: 1, Of: 2}},
		{"an edit of its own", new("package calc\n\nfunc Add(a, b int) int {\n\treturn b + a\n}\n"), nil, HandoffUse{Use: HandoffUnused, Of: 2}},
		{"the file as the run left it", new(before), nil, HandoffUse{Use: HandoffUnknown, Of: 2, Why: "the file is as the run left it"}},
		{"the file removed", nil, nil, HandoffUse{Use: HandoffUnused, Of: 2}},
		{"no line new to the file", new(before), []HandoffFile{HandoffFileOf("calc.go", []byte(before), []byte("package calc\n"))},
			HandoffUse{Use: HandoffUnknown, Why: "the attempt adds no line new to its file"}},
		{"a file outside the repository", new(applied), []HandoffFile{{File: "../calc.go", Added: f.Added}},
			HandoffUse{Use: HandoffUnknown, Why: "a file outside the repository"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if tc.file != nil {
				require.NoError(t, os.WriteFile(filepath.Join(root, "calc.go"), []byte(*tc.file), 0o644))
			}
			files := tc.files
			if files == nil {
				files = []HandoffFile{f}
			}
			assert.Equal(t, tc.want, MeasureHandoff(root, files))
		})
	}
}

// TestHandoffUseOutranks: a mark stands over any measure (the last mark), a measure a later run
// recorded over one made now (the first recorded), and without a root nothing is measured.
func TestHandoffUseOutranks(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.go"), []byte("new line\n"), 0o644))
	files := []HandoffFile{HandoffFileOf("a.go", []byte("old\n"), []byte("new line\n"))}
	measured := func(use string) HandoffUseEvent {
		return HandoffUseEvent{Use: use, Source: UseMeasured, Present: new(0), Of: new(1), By: "x"}
	}
	mark := func(use string) HandoffUseEvent { return HandoffUseEvent{Use: use, Source: UseMarked} }
	for _, tc := range []struct {
		name   string
		events []HandoffUseEvent
		root   string
		want   HandoffUse
	}{
		{"nothing recorded, measured now", nil, root, HandoffUse{Use: HandoffUsed, Source: UseMeasuredNow, Present: 1, Of: 1}},
		{"nothing recorded, no root", nil, "", HandoffUse{Use: HandoffUnknown, Why: "not measured"}},
		{"the first measure recorded", []HandoffUseEvent{measured(HandoffUnused), measured(HandoffUsed)}, root, HandoffUse{Use: HandoffUnused, Source: UseMeasured, Of: 1}},
		{"a mark over a measure", []HandoffUseEvent{measured(HandoffUnused), mark(HandoffUsed)}, root, HandoffUse{Use: HandoffUsed, Source: UseMarked}},
		{"the last mark", []HandoffUseEvent{mark(HandoffUsed), measured(HandoffUsed), mark(HandoffUnused)}, root, HandoffUse{Use: HandoffUnused, Source: UseMarked}},
		{"a word of neither kind is none", []HandoffUseEvent{{Use: "maybe", Source: UseMarked}, {Use: HandoffUsed, Source: "guess"}}, "", HandoffUse{Use: HandoffUnknown, Why: "not measured"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := HandoffRecord{Files: files}
			for _, e := range tc.events {
				rec.AddUse(e)
			}
			assert.Equal(t, tc.want, rec.Use(tc.root))
		})
	}
}

// writeJournal writes a sealed journal of run id in dir holding events.
func writeJournal(t *testing.T, dir, id string, key []byte, events ...Event) string {
	t.Helper()
	path := filepath.Join(dir, id+".jsonl")
	j, err := OpenJournal(path, id)
	require.NoError(t, err)
	j.Seal(key)
	for _, ev := range events {
		j.Emit(ev)
	}
	require.NoError(t, j.Close())
	return path
}

// TestMarkHandoff appends a sealed mark to a red run's journal with a handoff, and refuses one
// that has none, a workflow's item, and a journal not sealed with the key.
func TestMarkHandoff(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	dir := t.TempDir()
	h := NewHandoff("red", HandoffDraft{Rule: "r", Diff: "+x\n", Next: "n"})
	handoff := HandoffEvent{Handoff: h, Files: []HandoffFile{HandoffFileOf("a.go", nil, []byte("x\n"))}}
	red := writeJournal(t, dir, "20260101T000000Z-aaaaaa", key, RunStartEvent{Mode: "transform"}, handoff, RunEndEvent{Status: StatusRed})
	writeJournal(t, dir, "20260101T000000Z-bbbbbb", key, RunStartEvent{Mode: "transform"}, RunEndEvent{Status: StatusOK})
	writeJournal(t, dir, "20260101T000000Z-cccccc", key, RunStartEvent{Mode: "transform", Parent: &ParentRun{Run: "w"}}, handoff, RunEndEvent{Status: StatusRed})
	writeJournal(t, dir, "20260101T000000Z-dddddd", []byte("another key, not the operator's!"), RunStartEvent{Mode: "transform"}, handoff, RunEndEvent{Status: StatusRed})

	run, err := MarkHandoff(dir, "20260101T000000Z-aaa", HandoffUsed, key)
	require.NoError(t, err)
	assert.Equal(t, "20260101T000000Z-aaaaaa", run)
	id, rec, ok := readHandoff(red, key)
	require.True(t, ok, "the journal stays sealed")
	assert.Equal(t, run, id)
	assert.Equal(t, HandoffUse{Use: HandoffUsed, Source: UseMarked}, rec.Use(""))
	assert.Equal(t, int64(h.Bytes), rec.Bytes)

	for _, id := range []string{"20260101T000000Z-bbb", "20260101T000000Z-ccc", "20260101T000000Z-ddd"} {
		_, err := MarkHandoff(dir, id, HandoffUsed, key)
		var none *NoHandoffError
		assert.ErrorAs(t, err, &none, id)
	}
	_, err = MarkHandoff(dir, "20260101T000000Z-aaa", "maybe", key)
	assert.ErrorContains(t, err, "used or unused")
}

// TestAppendEventWaitsForNoWriter: a journal its run still writes (its lock held) takes no
// appended event, which would seal it before the run's own last lines.
func TestAppendEventRefusesALiveJournal(t *testing.T) {
	key := []byte("0123456789abcdef0123456789abcdef")
	path := filepath.Join(t.TempDir(), "20260101T000000Z-aaaaaa.jsonl")
	j, err := OpenJournal(path, "20260101T000000Z-aaaaaa")
	require.NoError(t, err)
	j.Seal(key)
	j.Emit(RunStartEvent{Mode: "transform"})
	assert.ErrorContains(t, AppendEvent(path, "20260101T000000Z-aaaaaa", VerdictEvent{Verdict: "accepted"}, key), "being written")
	require.NoError(t, j.Close())
	assert.NoError(t, AppendEvent(path, "20260101T000000Z-aaaaaa", VerdictEvent{Verdict: "accepted"}, key))
}
