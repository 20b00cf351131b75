package dedup

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
)

// limitedEmbedder is an embeddings server whose model takes inputs of at most limit bytes,
// refusing a batch with any longer one as llama-server does; an input's vector counts its
// letters a to d, so texts of the same letters point the same way.
func limitedEmbedder(t *testing.T, limit int) (*httptest.Server, *[]int) {
	var sizes []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i, in := range req.Input {
			sizes = append(sizes, len(in))
			if len(in) > limit {
				w.WriteHeader(http.StatusInternalServerError)
				fmt.Fprintf(w, `{"error":{"code":500,"message":"input (%d tokens) is too large to process. increase the physical batch size (current batch size: 512)","type":"server_error"}}`, len(in)/4)
				return
			}
			v := make([]float32, 4)
			for _, c := range in {
				if c >= 'a' && c <= 'd' {
					v[c-'a']++
				}
			}
			data = append(data, item{Index: i, Embedding: v})
		}
		w.Header().Set("Content-Type", "application/json")
		require.NoError(t, json.NewEncoder(w).Encode(map[string]any{"data": data}))
	}))
	t.Cleanup(srv.Close)
	return srv, &sizes
}

// An entry longer than the embedding model takes is embedded in pieces and pooled, said in the
// result and the journal, rather than failing the whole screen.
func TestDedupFitsLongEntriesToTheModel(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	long := strings.Repeat("aab abc abd\n", 200) // 2,400 bytes
	files := map[string]string{"short.md": "ccc ddd\n", "long.md": long, "copy.md": long + "abc\n"}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644))
	}
	srv, sizes := limitedEmbedder(t, 700)
	var found Result
	spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: runtest.Settings(t, "dedup", map[string]string{"base-url": srv.URL + "/v1", "model": "tiny"}), Model: "tiny",
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
	res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, NoCache: true, Pairs: true}, &found))
	require.Nil(t, res.Error, "%v", res.Error)
	assert.Equal(t, 2, found.Fitted)
	assert.Equal(t, 2, res.Details.(*Details).Fitted)
	require.Len(t, found.Pairs, 1, "the two long entries, pooled, are near-duplicates")
	for _, n := range *sizes {
		if n > 700 || n == len(files["short.md"]) {
			continue
		}
		assert.GreaterOrEqual(t, n, minPiece, "no piece cut below the floor")
	}
	journal, err := os.ReadFile(spec.JournalPath)
	require.NoError(t, err)
	assert.Equal(t, 2, strings.Count(string(journal), `"event":"embed_fitted"`))
}

// A text no cut makes fit (the model refuses even the floor's pieces) fails the screen with the
// server's refusal at the first piece that cannot be cut again, after a bounded number of requests.
func TestDedupFitGivesUpAtTheFloor(t *testing.T) {
	tooLong := &client.EmbedInputTooLongError{Err: &client.HTTPError{Status: 500, Message: "input is too large to process"}}
	calls := 0
	embed := func(_ context.Context, inputs []string) ([][]float32, error) {
		calls++
		return nil, tooLong
	}
	_, _, err := fitted(context.Background(), embed, strings.Repeat("x", 4*minPiece))
	require.ErrorIs(t, err, tooLong)
	assert.Equal(t, 3, calls, "the text, its first half, that half's first half")
}

func TestHalve(t *testing.T) {
	for _, tc := range []struct{ name, text, head string }{
		{"at the line nearest the middle", "aaaa\nbbbbbb\ncc\ndd\n", "aaaa\nbbbbbb\n"},
		{"a tie goes to the line before", "aaaa\nbbbbbbb\ncc\ndd\n", "aaaa\n"},
		{"no line in the middle half", strings.Repeat("x", 10), "xxxxx"},
		{"on a rune boundary", "ééééé", "éé"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, tail := halve(tc.text)
			assert.Equal(t, tc.head, head)
			assert.Equal(t, tc.text, head+tail)
		})
	}
}

func TestPoolWeighsUnitVectorsByLength(t *testing.T) {
	got := pool([]float32{2, 0}, []float32{0, 5}, 3, 1)
	assert.InDelta(t, 0.75, got[0], 1e-6)
	assert.InDelta(t, 0.25, got[1], 1e-6)
}
