package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An acceptance records when it was given, not when the command started: the server is asked
// (and a screen runs) before it, and the clock moves on meanwhile.
func TestRolesAcceptRecordsTheAnswersTime(t *testing.T) {
	started := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	answered := started.Add(7 * time.Minute)
	var clock atomic.Pointer[time.Time]
	clock.Store(&started)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		clock.Store(&answered)
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model"}]}`))
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()

	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	require.NoError(t, os.MkdirAll(filepath.Join(repo, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	vars := map[string]string{
		"HOME":            filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME": filepath.Join(dir, "config"),
		"XDG_STATE_HOME":  filepath.Join(dir, "state"),
		"XDG_CACHE_HOME":  filepath.Join(dir, "cache"),
		"LOCUM_BASE_URL":  srv.URL + "/v1",
	}
	var stdout, stderr bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr,
		lookup: func(k string) (string, bool) { v, ok := vars[k]; return v, ok },
		getwd:  func() (string, error) { return repo, nil },
		now:    func() time.Time { return *clock.Load() }}
	err := e.rootCommand().Run(context.Background(), []string{"locum", "roles", "accept", "code", "m", "--yes", "--no-screen"})
	require.NoError(t, err, stderr.String())
	config, err := os.ReadFile(filepath.Join(dir, "config", "locum", "config.json"))
	require.NoError(t, err)
	assert.Contains(t, string(config), `"accepted_at": "2026-12-05T10:07:00Z"`)
}
