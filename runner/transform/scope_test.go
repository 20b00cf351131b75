package transform

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/gitsafe"
	"github.com/locumdev/locum/internal/gittest"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

// The scope event holds what a bench replays the run from: its task, and in a repository the
// commit HEAD was at and the file's bytes as read, so a replay can tell the file at that commit
// is the one the run read.
func TestScopeRecordsWhatAReplayNeeds(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("lmstudio"))
	s.On("POST", "/v1/chat/completions", runtest.Answer("b"))
	repo := gittest.Repo(t, map[string]string{"a.txt": "a\n"})
	// A change not committed: the run reads the working tree's bytes, which the hash says.
	require.NoError(t, os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a, uncommitted\n"), 0o644))
	head, err := gitsafe.Head(context.Background(), repo)
	require.NoError(t, err)
	plain := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(plain, "a.txt"), []byte("a\n"), 0o644))
	for _, c := range []struct {
		name, root, base, bytes string
	}{
		{"a repository", repo, head, "a, uncommitted\n"},
		{"no repository", plain, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			journal := filepath.Join(t.TempDir(), "run.jsonl")
			spec := engine.RunSpec{Mode: "transform", Root: c.root, Settings: runtest.SettingsFor(t, s.BaseURL()), Model: runtest.Model, Routing: "operator", JournalPath: journal}
			engine.Execute(context.Background(), spec, Steps(Options{File: "a.txt", Verify: "true", Task: "make it b", Cwd: c.root, Root: c.root}))
			ev := scopeEvent(t, journal)
			assert.Equal(t, "make it b", ev.Task)
			assert.Equal(t, c.base, ev.Base)
			want := ""
			if c.bytes != "" {
				sum := sha256.Sum256([]byte(c.bytes))
				want = hex.EncodeToString(sum[:])
			}
			assert.Equal(t, want, ev.FileSHA256)
		})
	}
}

func scopeEvent(t *testing.T, journal string) engine.FileScopeEvent {
	t.Helper()
	f, err := os.Open(journal)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var ev map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
		if engine.EventKind(ev) == "scope" {
			got, ok := engine.DecodeEvent[engine.FileScopeEvent](ev)
			require.True(t, ok)
			return got
		}
	}
	t.Fatalf("no scope event in %s", journal)
	return engine.FileScopeEvent{}
}
