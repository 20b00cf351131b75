package dedup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

var testKey = client.EmbeddingKey{Kind: rails.LlamaServer, Endpoint: "http://127.0.0.1:8080/v1", Model: "m"}

// day is a clock at noon of a day since 1970.
func day(n int) func() time.Time {
	return func() time.Time { return time.Unix(int64(n)*86400+43200, 0) }
}

func hashes(texts ...string) [][32]byte {
	out := make([][32]byte, len(texts))
	for i, t := range texts {
		out[i] = TextHash(t)
	}
	return out
}

func entries(vec []float32, texts ...string) []Entry {
	out := make([]Entry, len(texts))
	for i, t := range texts {
		out[i] = Entry{Hash: TextHash(t), Vector: vec}
	}
	return out
}

// Vectors come back as stored, for their key only, from one file in the cache directory; a text
// never stored is a miss.
func TestVectorCacheStoresInOneFile(t *testing.T) {
	dir := t.TempDir()
	c := VectorCache{Path: filepath.Join(dir, "locum", CacheFileName)}
	got, stale, err := c.Lookup(testKey, hashes("a"))
	require.NoError(t, err, "a cache not made yet is all misses")
	assert.Equal(t, [][]float32{nil}, got)
	assert.Empty(t, stale)

	_, err = c.Store(testKey, entries([]float32{1, 0.5}, "a", "b"), nil)
	require.NoError(t, err)
	got, _, err = c.Lookup(testKey, hashes("b", "absent", "a"))
	require.NoError(t, err)
	assert.Equal(t, [][]float32{{1, 0.5}, nil, {1, 0.5}}, got)

	other := testKey
	other.Digest = "sha256:another"
	got, _, err = c.Lookup(other, hashes("a"))
	require.NoError(t, err)
	assert.Equal(t, [][]float32{nil}, got, "another key shares nothing")

	files, err := os.ReadDir(filepath.Join(dir, "locum"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	assert.Equal(t, CacheFileName, files[0].Name())
	fi, err := os.Stat(c.Path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "the operator's file, nobody else's")
}

// A hit is marked used once a day at most, so a warm run the same day writes nothing for it.
func TestVectorCacheMarksUseOncePerDay(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName), now: day(100)}
	_, err := c.Store(testKey, entries([]float32{1}, "a"), nil)
	require.NoError(t, err)
	_, stale, err := c.Lookup(testKey, hashes("a"))
	require.NoError(t, err)
	assert.Empty(t, stale, "stored today")

	c.now = day(103)
	_, stale, err = c.Lookup(testKey, hashes("a"))
	require.NoError(t, err)
	assert.Equal(t, hashes("a"), stale)
	_, err = c.Store(testKey, nil, stale)
	require.NoError(t, err)
	_, stale, err = c.Lookup(testKey, hashes("a"))
	require.NoError(t, err)
	assert.Empty(t, stale)
	st, err := c.Stats()
	require.NoError(t, err)
	require.Len(t, st.Models, 1)
	assert.Equal(t, CacheModel{Server: "llama-server", Endpoint: testKey.Endpoint, Model: "m", Vectors: 1, LastUsed: "1970-04-14"}, st.Models[0])
}

// A value that is not a whole, finite vector with its day is a miss, never a vector.
func TestVectorCacheRefusesBadValues(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	_, err := c.Store(testKey, entries([]float32{1}, "good"), nil)
	require.NoError(t, err)
	db, err := bolt.Open(c.Path, 0o600, nil)
	require.NoError(t, err)
	bad := map[string][]byte{
		"day only":  {1, 0, 0, 0},
		"ragged":    {1, 0, 0, 0, 1, 2, 3},
		"nan":       {1, 0, 0, 0, 0, 0, 0xc0, 0x7f},
		"infinite":  {1, 0, 0, 0, 0, 0, 0x80, 0x7f},
		"oversized": make([]byte, maxCachedVector+4),
	}
	require.NoError(t, db.Update(func(tx *bolt.Tx) error {
		vb := tx.Bucket(keyBucket(testKey)).Bucket(vectorsBucket)
		for name, v := range bad {
			h := TextHash(name)
			if err := vb.Put(h[:], v); err != nil {
				return err
			}
		}
		return nil
	}))
	require.NoError(t, db.Close())
	for name := range bad {
		got, _, err := c.Lookup(testKey, hashes(name))
		require.NoError(t, err)
		assert.Nil(t, got[0], name)
	}
}

// Where the cache should be there is a link, a folder, a file that is not a bbolt file, or a
// lock another process holds: each is a CacheError, never a read through it or a wait without end.
func TestVectorCacheRefusesWhatIsNotItsFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere.db")
	require.NoError(t, seedCache(target))
	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(target, link))
	folder := filepath.Join(dir, "folder.db")
	require.NoError(t, os.Mkdir(folder, 0o755))
	junk := filepath.Join(dir, "junk.db")
	require.NoError(t, os.WriteFile(junk, []byte(strings.Repeat("not a database\n", 1000)), 0o600))
	locked := filepath.Join(dir, "locked.db")
	held, err := bolt.Open(locked, 0o600, nil)
	require.NoError(t, err)
	defer held.Close()

	for _, path := range []string{link, folder, junk, locked} {
		c := VectorCache{Path: path, Wait: 20 * time.Millisecond}
		_, _, err := c.Lookup(testKey, hashes("a"))
		var ce *CacheError
		assert.ErrorAs(t, err, &ce, path)
		_, err = c.Store(testKey, entries([]float32{1}, "a"), nil)
		assert.ErrorAs(t, err, &ce, path)
	}
}

// seedCache makes a cache file with one vector.
func seedCache(path string) error {
	_, err := VectorCache{Path: path}.Store(testKey, entries([]float32{1}, "seed"), nil)
	return err
}

// Past its cap the cache evicts the least recently used vectors, of any key, down to three
// quarters of it; what a run just used stays.
func TestVectorCacheEvictsTheLeastRecentlyUsed(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	vec := make([]float32, 768) // a vector to a page, as a real model's are
	var old, recent []string
	for i := range 300 {
		old = append(old, "old "+strings.Repeat("x", i))
		recent = append(recent, "recent "+strings.Repeat("x", i))
	}
	c.now = day(10)
	_, err := c.Store(testKey, entries(vec, old...), nil)
	require.NoError(t, err)
	c.now = day(11)
	_, err = c.Store(testKey, entries(vec, recent...), nil)
	require.NoError(t, err)
	before, err := c.Stats()
	require.NoError(t, err)

	c.MaxBytes = before.Bytes * 9 / 10
	evicted, err := c.Store(testKey, entries(vec, "newest"), nil)
	require.NoError(t, err)
	assert.Positive(t, evicted)
	assert.Less(t, evicted, len(old), "three quarters of the cap holds every recent vector")
	got, _, err := c.Lookup(testKey, hashes(append(recent, "newest")...))
	require.NoError(t, err)
	for i := range got {
		assert.NotNil(t, got[i], "recent %d", i)
	}
	got, _, err = c.Lookup(testKey, hashes(old...))
	require.NoError(t, err)
	gone := 0
	for i := range got {
		if got[i] == nil {
			gone++
		}
	}
	assert.Equal(t, evicted, gone, "only the least recently used go")
	after, err := c.Stats()
	require.NoError(t, err)
	assert.LessOrEqual(t, after.Bytes, c.MaxBytes)
	assert.Equal(t, len(old)+len(recent)+1-evicted, after.Vectors)
}

// Prune removes what was last used before a day, then the least recently used past a size, and
// compacts: the file shrinks by what they held. --all removes the file.
func TestVectorCachePrune(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	vec := make([]float32, 256)
	var texts []string
	for i := range 300 {
		texts = append(texts, strings.Repeat("y", i+1))
	}
	c.now = day(10)
	_, err := c.Store(testKey, entries(vec, texts[:200]...), nil)
	require.NoError(t, err)
	require.NoError(t, c.StoreScreen(testKey, []byte("old"), &Screen{Entries: make([][32]byte, 2)}))
	c.now = day(40)
	_, err = c.Store(testKey, entries(vec, texts[200:]...), nil)
	require.NoError(t, err)
	require.NoError(t, c.StoreScreen(testKey, []byte("new"), &Screen{Entries: make([][32]byte, 2)}))

	rep, err := c.Prune(PruneOptions{OlderThan: 20 * 24 * time.Hour})
	require.NoError(t, err)
	assert.Equal(t, 200, rep.Removed)
	assert.Equal(t, 100, rep.Kept)
	assert.Less(t, rep.BytesAfter, rep.BytesBefore/2)
	got, _, err := c.Lookup(testKey, hashes(texts[299], texts[0]))
	require.NoError(t, err)
	assert.NotNil(t, got[0])
	assert.Nil(t, got[1])
	for id, kept := range map[string]bool{"old": false, "new": true} {
		sc, err := c.LoadScreen(testKey, []byte(id))
		require.NoError(t, err)
		assert.Equal(t, kept, sc != nil, "screen %s", id)
	}

	st, err := c.Stats()
	require.NoError(t, err)
	rep, err = c.Prune(PruneOptions{MaxBytes: st.Bytes / 2})
	require.NoError(t, err)
	assert.Positive(t, rep.Removed)
	assert.Equal(t, 100-rep.Removed, rep.Kept)

	kept := rep.Kept
	rep, err = c.Prune(PruneOptions{All: true})
	require.NoError(t, err)
	assert.Equal(t, kept, rep.Removed)
	assert.NoFileExists(t, c.Path)
	rep, err = c.Prune(PruneOptions{All: true})
	require.NoError(t, err)
	assert.Zero(t, rep.Removed, "nothing to prune")
}

// A cache that cannot be used does not fail the screen: it embeds every file, says why, and
// journals the problem.
func TestDedupGoesOnWithoutABrokenCache(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, name := range []string{"a.md", "b.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("text of "+name), 0o644))
	}
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("llama-server"))
	s.On("POST", "/v1/embeddings", runtest.JSON(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`))
	path := filepath.Join(t.TempDir(), CacheFileName)
	require.NoError(t, os.Mkdir(path, 0o755))
	var found Result
	spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: runtest.Settings(t, "dedup", map[string]string{"base-url": s.BaseURL(), "model": "m"}), Model: "m",
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
	res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, Cache: VectorCache{Path: path}}, &found))
	require.Nil(t, res.Error)
	assert.Contains(t, found.CacheProblem, "not a regular file")
	assert.Len(t, s.RequestsTo("/v1/embeddings"), 1)
	journal, err := os.ReadFile(spec.JournalPath)
	require.NoError(t, err)
	assert.Contains(t, string(journal), `"event":"cache_error"`)
}

// Vectors planted under the repository's git directory, where an older locum kept its cache (one
// file per vector, in a folder named by the key's hash), are never read: they would make every
// note a copy of the others.
func TestDedupReadsNoCacheInTheRepository(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644))
	texts := []string{"alpha text\n", "beta text\n"}
	for i, text := range texts {
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.md", i)), []byte(text), 0o644))
	}
	s := scripted.New()
	defer s.Close()
	require.NoError(t, s.Mimic("llama-server"))
	s.On("POST", "/v1/embeddings", runtest.JSON(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0,1]}]}`))
	key := client.EmbeddingKey{Kind: rails.LlamaServer, Endpoint: s.BaseURL(), Model: "m"}
	sum := sha256.Sum256([]byte(strings.Join([]string{string(key.Kind), key.Endpoint, key.Model, key.Digest}, "\x00")))
	planted := filepath.Join(root, ".git", "locum", "embeddings", hex.EncodeToString(sum[:8]))
	require.NoError(t, os.MkdirAll(planted, 0o755))
	for _, text := range texts {
		h := sha256.Sum256([]byte(text))
		require.NoError(t, os.WriteFile(filepath.Join(planted, hex.EncodeToString(h[:])+".f32"), []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0}, 0o644))
	}
	var found Result
	spec := engine.RunSpec{Mode: "dedup", Root: root, Settings: runtest.Settings(t, "dedup", map[string]string{"base-url": s.BaseURL(), "model": "m"}), Model: "m",
		JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
	res := engine.Execute(context.Background(), spec, Steps(Options{Dir: dir, Root: root, Cache: VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}}, &found))
	require.Nil(t, res.Error)
	assert.Zero(t, found.Cached)
	assert.Len(t, s.RequestsTo("/v1/embeddings"), 1)
	assert.Zero(t, found.Total, "the server's vectors, not the planted copies")
}

// A prune to a size the data is already under removes nothing, though the file holds free pages
// a run's eviction left.
func TestVectorCachePruneCountsDataNotFreePages(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	vec := make([]float32, 768)
	var old, recent []string
	for i := range 200 {
		old, recent = append(old, fmt.Sprint("old ", i)), append(recent, fmt.Sprint("recent ", i))
	}
	c.now = day(10)
	_, err := c.Store(testKey, entries(vec, old...), nil)
	require.NoError(t, err)
	full, err := c.Stats()
	require.NoError(t, err)
	c.now, c.MaxBytes = day(11), full.Bytes*3/2
	evicted, err := c.Store(testKey, entries(vec, recent...), nil)
	require.NoError(t, err)
	require.Positive(t, evicted)
	st, err := c.Stats()
	require.NoError(t, err)
	require.Greater(t, st.FileBytes, st.Bytes, "free pages")

	fresh := VectorCache{Path: c.Path}
	rep, err := fresh.Prune(PruneOptions{MaxBytes: st.Bytes + 4096})
	require.NoError(t, err)
	assert.Zero(t, rep.Removed)
	assert.Equal(t, st.Vectors, rep.Kept)
	assert.Less(t, rep.BytesAfter, rep.BytesBefore, "compacted")
}

// Screens count toward the cap and are evicted with the vectors, the least recently used first.
func TestVectorCacheEvictsScreensToo(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName), now: day(10)}
	big := &Screen{Method: "exact", Entries: make([][32]byte, 2000)}
	for i := range 50000 {
		big.Pairs = append(big.Pairs, ScreenPair{I: uint32(i % 1000), J: 1000 + uint32(i%1000), Score: 0.9})
	}
	require.NoError(t, c.StoreScreen(testKey, []byte("old screen"), big))
	c.now = day(11)
	vec := make([]float32, 768)
	var texts []string
	for i := range 100 {
		texts = append(texts, fmt.Sprint("v ", i))
	}
	_, err := c.Store(testKey, entries(vec, texts...), nil)
	require.NoError(t, err)
	st, err := c.Stats()
	require.NoError(t, err)

	c.MaxBytes = st.Bytes * 2 / 3
	evicted, err := c.Store(testKey, entries(vec, "one more"), nil)
	require.NoError(t, err)
	assert.Zero(t, evicted, "the old screen went, not the vectors")
	s, err := c.LoadScreen(testKey, []byte("old screen"))
	require.NoError(t, err)
	assert.Nil(t, s)
	after, err := c.Stats()
	require.NoError(t, err)
	assert.Equal(t, 101, after.Vectors)
	assert.LessOrEqual(t, after.Bytes, c.MaxBytes)
}

// An empty file where the cache should be (a writer that died before it initialised the file, or
// one that has not yet) reads as no cache, and the next store initialises it.
func TestVectorCacheEmptyFileIsNoCache(t *testing.T) {
	c := VectorCache{Path: filepath.Join(t.TempDir(), CacheFileName)}
	require.NoError(t, os.WriteFile(c.Path, nil, 0o600))
	got, _, err := c.Lookup(testKey, hashes("a"))
	require.NoError(t, err)
	assert.Nil(t, got[0])
	s, err := c.LoadScreen(testKey, []byte("x"))
	require.NoError(t, err)
	assert.Nil(t, s)
	_, err = c.Stats()
	require.NoError(t, err)
	_, err = c.Store(testKey, entries([]float32{1}, "a"), nil)
	require.NoError(t, err)
	got, _, err = c.Lookup(testKey, hashes("a"))
	require.NoError(t, err)
	assert.Equal(t, []float32{1}, got[0])
}
