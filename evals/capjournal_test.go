package evals

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func journalTurn(run int) Turn {
	seed := TurnSeed(42, "code", run)
	return Turn{Arm: ArmLocal, Task: "code", Run: run, Seed: &seed, Model: "m", Completed: true, Passed: true,
		Evidence: []string{"ok"}, Output: fmt.Sprintf("```go\nfunc Load() {} // run %d, \"quoted\" \\ and ünïcode\n```", run)}
}

func journalBytes(t *testing.T, cond Conditions, lines ...journalLine) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, l := range append([]journalLine{{Kind: "conditions", Conditions: &cond}}, lines...) {
		data, err := json.Marshal(l)
		require.NoError(t, err)
		b.Write(append(data, '\n'))
	}
	return b.Bytes()
}

// A crash can cut the journal's last line anywhere. At every byte offset of that line, resuming
// keeps the complete turns before it, says it cut the rest, and every turn written after the
// resume reads back: none merges into the torn line and none is lost.
func TestJournalResumesFromATornLineAtEveryOffset(t *testing.T) {
	cond := Conditions{Seed: 42, K: 5, Models: map[string]string{"code": "m"}, Fingerprints: map[string]string{"code": "x"}}
	head := journalBytes(t, cond, journalLine{Kind: "turn", Turn: ptr(journalTurn(1))}, journalLine{Kind: "turn", Turn: ptr(journalTurn(2))})
	third, err := json.Marshal(journalLine{Kind: "turn", Turn: ptr(journalTurn(3))})
	require.NoError(t, err)
	third = append(third, '\n')
	path := filepath.Join(t.TempDir(), "j.jsonl")
	for cut := 0; cut <= len(third); cut++ {
		require.NoError(t, os.WriteFile(path, append(append([]byte(nil), head...), third[:cut]...), 0o644))
		var log strings.Builder
		logf := func(f string, a ...any) { fmt.Fprintf(&log, f, a...) }
		j, done, _, err := openCaptureJournal(path, cond, logf)
		require.NoError(t, err, "cut at %d", cut)
		whole := cut == len(third)
		if whole {
			assert.Len(t, done, 3)
			assert.Empty(t, log.String())
		} else {
			require.Len(t, done, 2, "cut at %d", cut)
			if cut > 0 {
				assert.Contains(t, log.String(), fmt.Sprintf("last line was cut short (%d bytes", cut))
			}
			require.NoError(t, j.write(journalLine{Kind: "turn", Turn: ptr(journalTurn(3))}))
		}
		require.NoError(t, j.write(journalLine{Kind: "turn", Turn: ptr(journalTurn(4))}))
		require.NoError(t, j.write(journalLine{Kind: "turn", Turn: ptr(journalTurn(5))}))
		require.NoError(t, j.close())

		j, done, _, err = openCaptureJournal(path, cond, logf)
		require.NoError(t, err, "cut at %d", cut)
		require.NoError(t, j.close())
		require.Len(t, done, 5, "cut at %d: every turn written reads back", cut)
		for run := 1; run <= 5; run++ {
			assert.Equal(t, journalTurn(run).Output, done[fmt.Sprintf("L/code/%d", run)].Output)
		}
	}
}

func TestJournalRefusesWhatItDidNotWrite(t *testing.T) {
	cond := Conditions{Seed: 42, K: 5}
	dir := t.TempDir()
	cases := []struct {
		name string
		data []byte
		want any
	}{
		{"a merged line in the middle", append(journalBytes(t, cond), []byte("{\"kind\":\"turn\",\"tu{\"kind\":\"turn\"}\n{\"kind\":\"host\"}\n")...), new(*JournalCorruptError)},
		{"an unknown kind", append(journalBytes(t, cond), []byte("{\"kind\":\"other\"}\n")...), new(*JournalCorruptError)},
		{"turns taken under other conditions", journalBytes(t, Conditions{Seed: 43, K: 5}, journalLine{Kind: "turn", Turn: ptr(journalTurn(1))}), new(*JournalMismatchError)},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, fmt.Sprintf("%d.jsonl", i))
			require.NoError(t, os.WriteFile(path, tc.data, 0o644))
			_, _, _, err := openCaptureJournal(path, cond, func(string, ...any) {})
			require.Error(t, err)
			assert.True(t, errors.As(err, tc.want), "got %v", err)
			after, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, tc.data, after, "a refused journal is left as it was")
		})
	}
	t.Run("other conditions and no turn yet start afresh", func(t *testing.T) {
		path := filepath.Join(dir, "fresh.jsonl")
		require.NoError(t, os.WriteFile(path, journalBytes(t, Conditions{Seed: 43, K: 5}), 0o644))
		j, done, _, err := openCaptureJournal(path, cond, func(string, ...any) {})
		require.NoError(t, err)
		require.NoError(t, j.close())
		assert.Empty(t, done)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		assert.Equal(t, journalBytes(t, cond), data)
	})
	t.Run("a FIFO", func(t *testing.T) {
		path := filepath.Join(dir, "fifo.jsonl")
		require.NoError(t, syscall.Mkfifo(path, 0o644))
		_, _, _, err := openCaptureJournal(path, cond, func(string, ...any) {})
		assert.ErrorContains(t, err, "not a regular file")
	})
}

func ptr[T any](v T) *T { return &v }
