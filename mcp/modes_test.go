package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scripted"
)

func TestSummarizeGivesTheCheckedDigest(t *testing.T) {
	f := newFixture(t, true)
	digest := `{"digest":[{"text":"Add returns a - b.","lines":[3,5],"quote":"return a - b"},{"text":"It caches.","lines":[1,1],"quote":"cache"}]}`
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &digest})
	res, err := f.call(t, context.Background(), "summarize", map[string]any{"file": "calc.go", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	// The claims are the structured content's: the text is one line that does not repeat them.
	assert.NotContains(t, text(res), "\n")
	assert.NotContains(t, text(res), "Add returns a - b.")
	assert.Regexp(t, `^OK: summarize; saved=[-+]\$[0-9.]+\(est\) run=\S+$`, text(res))
	details := structured(t, res)["details"].(map[string]any)
	assert.EqualValues(t, 1, details["supported"])
	claims := details["claims"].([]any)
	require.Len(t, claims, 2)
	assert.Equal(t, "Add returns a - b.", claims[0].(map[string]any)["text"])
	assert.Equal(t, calc, f.file(t), "summarize never edits")
}

// The handoff tool hands over a file's last lines: every item in the structured content with the
// lines it cites and the gate's verdict, one whose quote the lines do not hold unsupported.
func TestHandoffGivesTheCheckedItems(t *testing.T) {
	f := newFixture(t, true)
	log := "+ go test ./...\n--- FAIL: TestLatest (0.00s)\n    proxy_test.go:147: got version \"v1.0.0\", want \"v1.1.0\"\nFAIL\texample.com/proxy\t0.97s\n"
	require.NoError(t, os.WriteFile(filepath.Join(f.root, "build.log"), []byte("+ go vet ./...\n"+log), 0o644))
	reply := `{"handoff":[{"section":"open","text":"TestLatest fails: it got v1.0.0 and wants v1.1.0.","quote":"got version \"v1.0.0\"","lines":[3,4]},` +
		`{"section":"next","text":"TestLatest panics on a nil map.","quote":"panic: assignment to entry in nil map","lines":[3,3]}]}`
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &reply})
	res, err := f.call(t, context.Background(), "handoff", map[string]any{"file": "build.log", "tail": "4", "focus": "why it fails", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Regexp(t, `^OK: handoff; saved=[-+]\$[0-9.]+\(est\) run=\S+$`, text(res))
	details := structured(t, res)["details"].(map[string]any)
	assert.EqualValues(t, 1, details["supported"])
	assert.Equal(t, "2-5", details["lines"], "the last 4 lines, numbered as the file numbers them")
	items := details["items"].([]any)
	require.Len(t, items, 2)
	open, next := items[0].(map[string]any), items[1].(map[string]any)
	assert.Equal(t, "supported", open["verdict"])
	assert.Equal(t, []any{3.0, 4.0}, open["lines"])
	assert.Equal(t, "unsupported", next["verdict"])
	assert.Contains(t, next["reason"], `the quote "panic: assignment to entry in nil map" is not in lines 3-3`)
	body := string(f.llm.RequestsTo("/v1/chat/completions")[0].Body)
	assert.Contains(t, body, "Focus: why it fails")
	assert.Contains(t, body, "Lines 2-5 of 5:")

	res, err = f.call(t, context.Background(), "handoff", map[string]any{"file": "build.log", "tail": "0", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "tail")
}

func TestDedupListsPairs(t *testing.T) {
	f := newFixture(t, false)
	dir := filepath.Join(f.root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, n := range []string{"a.md", "b.md", "c.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte(n+" text\n"), 0o644))
	}
	body, err := json.Marshal(map[string]any{"object": "list", "data": []any{
		map[string]any{"index": 0, "embedding": []float64{1, 0}},
		map[string]any{"index": 1, "embedding": []float64{0.8, 0.6}},
		map[string]any{"index": 2, "embedding": []float64{0, 1}},
	}})
	require.NoError(t, err)
	f.llm.On("POST", "/v1/embeddings", scripted.Reply{JSON: body})
	// The embedding model is a setting, not a route: a call names it without --allow-model.
	res, err := f.call(t, context.Background(), "dedup", map[string]any{"dir": "notes", "model": "tiny-embed", "threshold": 0.5, "pairs": true}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.NotContains(t, text(res), "\n", "one line: the pairs are the structured content's")
	assert.NotContains(t, text(res), "0.8000")
	assert.Equal(t, "tiny-embed", structured(t, res)["model"])
	pairs := structured(t, res)["details"].(map[string]any)["pairs"].([]any)
	require.Len(t, pairs, 2)
	assert.Equal(t, map[string]any{"score": 0.8, "a": "a.md", "b": "b.md"}, pairs[0])

	// Without pairs, the pairs are joined into groups, as on the command line.
	res, err = f.call(t, context.Background(), "dedup", map[string]any{"dir": "notes", "model": "tiny-embed", "threshold": 0.5}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.NotContains(t, text(res), "group 1")
	details := structured(t, res)["details"].(map[string]any)
	assert.NotContains(t, details, "pairs")
	assert.Equal(t, []any{map[string]any{"files": []any{"a.md", "b.md", "c.md"}, "pairs": 2.0, "weakest": map[string]any{"score": 0.6, "a": "b.md", "b": "c.md"}}}, details["groups"])

	// A call chooses the method as the command line does: lexical scoring asks no server.
	before := len(f.llm.RequestsTo("/v1/embeddings"))
	res, err = f.call(t, context.Background(), "dedup", map[string]any{"dir": "notes", "method": "lexical", "exact": "true", "threshold": 0.1}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "lexical", structured(t, res)["details"].(map[string]any)["method"])
	assert.Len(t, f.llm.RequestsTo("/v1/embeddings"), before)

	// A folder out of the repository is refused, before any request.
	for _, dir := range []string{"..", "/etc"} {
		before := len(f.llm.RequestsTo("/v1/embeddings"))
		res, err = f.call(t, context.Background(), "dedup", map[string]any{"dir": dir, "model": "tiny-embed"}, nil)
		require.NoError(t, err)
		assert.True(t, res.IsError)
		assert.Contains(t, text(res), "outside the repository")
		assert.Len(t, f.llm.RequestsTo("/v1/embeddings"), before)
	}
}

// Two transforms of one file are queued: the second waits (and says so) until the first has
// ended, then edits the file as the first left it.
func TestSecondCallOnAFileWaitsItsTurn(t *testing.T) {
	f := newFixture(t, true)
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &goodEdit})
	gate := filepath.Join(f.root, "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))

	var mu sync.Mutex
	var order []string
	note := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	queued := make(chan struct{})
	firstVerifying := make(chan struct{})
	var once, queuedOnce sync.Once
	f.mu.Lock()
	f.onProg = func(msg string) {
		switch {
		case strings.HasPrefix(msg, "verify running"):
			once.Do(func() { close(firstVerifying) })
		case strings.HasPrefix(msg, "queued"):
			note("second queued")
			queuedOnce.Do(func() { close(queued) })
		case strings.HasPrefix(msg, "prefill"):
			note("prefill")
		}
	}
	f.mu.Unlock()

	first := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := f.call(t, context.Background(), "transform", map[string]any{
			"file": "calc.go", "verify": "read line < gate", "task": "make Add add", "model": "qwen3-coder-30b", "no_baseline": true,
		}, "first")
		assert.NoError(t, err)
		first <- res
	}()
	waitFor(t, firstVerifying, "the first call's verify")
	second := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := f.call(t, context.Background(), "transform", map[string]any{
			"file": "./calc.go", "verify": "true", "task": "make Add add", "model": "qwen3-coder-30b", "max_attempts": 1,
		}, "second")
		assert.NoError(t, err)
		second <- res
	}()
	waitFor(t, queued, "the second call to say it is queued")
	note("gate opened")
	g, err := os.OpenFile(gate, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = g.WriteString("go\n")
	require.NoError(t, err)
	require.NoError(t, g.Close())

	r1, r2 := <-first, <-second
	require.False(t, r1.IsError, text(r1))
	require.True(t, r2.IsError, text(r2))
	mu.Lock()
	defer mu.Unlock()
	// The second call's request went out only after the first call's verify was let through.
	assert.Equal(t, []string{"prefill", "second queued", "gate opened", "prefill"}, order)
	// The second saw the first's edit: its span already adds, so its reply changed nothing, and
	// it says so rather than OK.
	assert.Contains(t, text(r2), "left the span as it is: nothing was done")
	assert.Equal(t, "unchanged", structured(t, r2)["error"].(map[string]any)["kind"])
}

// waitFor fails the test when ch is not closed within a generous bound, rather than hang.
func waitFor(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("waited 30s for %s", what)
	}
}

// A call names its span by a Go declaration as the CLI's --symbol does; with lines too it is
// refused, as on the command line.
func TestSummarizeBySymbol(t *testing.T) {
	f := newFixture(t, true)
	digest := `{"digest":[{"text":"Add returns a - b.","lines":[3,5],"quote":"return a - b"}]}`
	f.llm.On("POST", "/v1/chat/completions", scripted.Reply{StreamAnswer: &digest})
	res, err := f.call(t, context.Background(), "summarize", map[string]any{"file": "calc.go", "symbol": "Add", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	require.False(t, res.IsError, text(res))
	assert.Equal(t, "Add returns a - b.", structured(t, res)["details"].(map[string]any)["claims"].([]any)[0].(map[string]any)["text"])
	assert.Equal(t, "3-5", structured(t, res)["details"].(map[string]any)["lines"])

	res, err = f.call(t, context.Background(), "summarize", map[string]any{"file": "calc.go", "symbol": "Add", "lines": "1-2", "model": "qwen3-coder-30b"}, nil)
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, text(res), "`lines` and `symbol` both name the span")
}
