package runner

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/scripted"
)

func b64(v ...float32) string {
	raw := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(raw)
}

func TestDecodeEmbeddingsBase64(t *testing.T) {
	cases := []struct {
		name, body string
		want       []float32
		err        string
	}{
		{"base64", `{"data":[{"index":0,"embedding":"` + b64(1, -0.5) + `"}]}`, []float32{1, -0.5}, ""},
		{"arrays with exponents and spaces", `{"data":[{"index":0,"embedding":[ 1e0 , -5E-1 ]}]}`, []float32{1, -0.5}, ""},
		{"base64 not a whole float", `{"data":[{"index":0,"embedding":"AAAAAAA="}]}`, nil, "nor base64 float32s"},
		{"base64 not base64", `{"data":[{"index":0,"embedding":"%%%%"}]}`, nil, "nor base64 float32s"},
		{"base64 NaN", `{"data":[{"index":0,"embedding":"` + b64(float32(math.NaN())) + `"}]}`, nil, "not finite"},
		{"array of strings", `{"data":[{"index":0,"embedding":["1","2"]}]}`, nil, "not a list of numbers"},
		{"nested arrays", `{"data":[{"index":0,"embedding":[[1],2]}]}`, nil, "not a list of numbers"},
		{"null in an array", `{"data":[{"index":0,"embedding":[1,null]}]}`, nil, "not a list of numbers"},
		{"an object", `{"data":[{"index":0,"embedding":{"a":1}}]}`, nil, "not a list of numbers"},
		{"out of float32 range", `{"data":[{"index":0,"embedding":[1e39]}]}`, nil, "not finite"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := DecodeEmbeddings([]byte(tc.body), 1)
			if tc.err == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, res.Vectors[0])
				return
			}
			var be *BadEmbeddingError
			require.True(t, errors.As(err, &be), "got %v", err)
			assert.Contains(t, be.Error(), tc.err)
		})
	}
}

func requestField(t *testing.T, r scripted.Request, field string) any {
	t.Helper()
	var body map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &body))
	return body[field]
}

func TestEmbedAsksForBase64(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", js(`{"data":[{"index":0,"embedding":"`+b64(0.25, 0.5)+`"}]}`))
	res, err := clientFor(t, s).Embed(context.Background(), "m", []string{"a"})
	require.NoError(t, err)
	assert.True(t, res.Base64)
	assert.Equal(t, []float32{0.25, 0.5}, res.Vectors[0])
	assert.Equal(t, "base64", requestField(t, s.RequestsTo("/v1/embeddings")[0], "encoding_format"))
}

// A server that ignores the field and sends arrays (the recorded llama-server reply) is read as is.
func TestEmbedReadsArraysSentForBase64(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", scripted.MustFixture("llama-server-embeddings/embeddings"))
	res, err := clientFor(t, s).Embed(context.Background(), "tiny-embed", []string{"a", "b"})
	require.NoError(t, err)
	assert.False(t, res.Base64)
	require.Len(t, res.Vectors, 2)
}

// A server that refuses base64 with a 400 is asked again for arrays, and asked for arrays from then
// on; a 500 is not retried.
func TestEmbedFallsBackToArrays(t *testing.T) {
	s := scripted.New()
	defer s.Close()
	arrays := js(`{"data":[{"index":0,"embedding":[1,0]}]}`)
	s.On("POST", "/v1/embeddings", scripted.Reply{Status: 400, JSON: json.RawMessage(`{"error":"unknown encoding_format base64"}`)}, arrays, arrays)
	c := clientFor(t, s)
	for range 2 {
		res, err := c.Embed(context.Background(), "m", []string{"a"})
		require.NoError(t, err)
		assert.Equal(t, []float32{1, 0}, res.Vectors[0])
	}
	reqs := s.RequestsTo("/v1/embeddings")
	require.Len(t, reqs, 3)
	assert.Equal(t, "base64", requestField(t, reqs[0], "encoding_format"))
	assert.Nil(t, requestField(t, reqs[1], "encoding_format"))
	assert.Nil(t, requestField(t, reqs[2], "encoding_format"))

	s.On("POST", "/v1/embeddings", scripted.MustFixture("llama-server-embeddings/err_too_long_embed"))
	_, err := clientFor(t, s).Embed(context.Background(), "m", []string{"a"})
	var he *HTTPError
	require.True(t, errors.As(err, &he), "got %v", err)
	assert.Len(t, s.RequestsTo("/v1/embeddings"), 4)
}

func dedupSettings(t *testing.T, baseURL, model string) *packs.Settings {
	t.Helper()
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	s, err := c.Resolve("dedup", nil, map[string]string{"base-url": baseURL, "model": model})
	require.NoError(t, err)
	return s
}

// The cache is keyed by server kind, endpoint, model and digest: a llama-server and then an
// Ollama at the same address, both asked for "tiny", share no vectors; nor do two Ollama models
// of one name with different digests. The same server and model hit the cache every time.
func TestEmbeddingCacheKeyedByServerAndDigest(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, ".git"), 0o755))
	dir := filepath.Join(root, "notes")
	require.NoError(t, os.Mkdir(dir, 0o755))
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("text of "+name), 0o644))
	}
	s := scripted.New()
	defer s.Close()
	s.On("POST", "/v1/embeddings", js(`{"data":[{"index":0,"embedding":[1,0]},{"index":1,"embedding":[0.8,0.6]},{"index":2,"embedding":[0,1]}]}`))
	tags := func(digest string) scripted.Reply {
		return js(`{"models":[{"name":"tiny:latest","model":"tiny:latest","digest":"` + digest + `"}]}`)
	}
	run := func() (DedupResult, []string) {
		t.Helper()
		var found DedupResult
		spec := RunSpec{Mode: "dedup", Root: root, Settings: dedupSettings(t, s.BaseURL(), "tiny"), Model: "tiny",
			JournalPath: filepath.Join(t.TempDir(), "j.jsonl")}
		res := Execute(context.Background(), spec, DedupSteps(DedupOptions{Dir: dir, Root: root}, &found))
		require.Nil(t, res.Error)
		assert.Equal(t, found.Cached, res.Details["cached"])
		journal, err := os.ReadFile(spec.JournalPath)
		require.NoError(t, err)
		return found, strings.Split(string(journal), "\n")
	}
	cacheEvent := func(lines []string) string {
		for _, l := range lines {
			if strings.Contains(l, `"event":"cache"`) {
				return l
			}
		}
		return ""
	}

	require.NoError(t, s.Mimic("llama-server"))
	first, journal := run()
	assert.Equal(t, 0, first.Cached)
	assert.Contains(t, cacheEvent(journal), `"server":"llama-server"`)
	again, _ := run()
	assert.Equal(t, 3, again.Cached, "the same server and model")

	require.NoError(t, s.Mimic("ollama"))
	s.On("GET", "/api/tags", tags("sha256:aaaa"))
	ollama, journal := run()
	assert.Equal(t, 0, ollama.Cached, "another server kind at the same address")
	assert.Contains(t, cacheEvent(journal), `"digest":"sha256:aaaa"`)
	again, _ = run()
	assert.Equal(t, 3, again.Cached)

	s.On("GET", "/api/tags", tags("sha256:bbbb"))
	replaced, _ := run()
	assert.Equal(t, 0, replaced.Cached, "the model was replaced under its name")
}

// The cache lives under the repository, so its files are untrusted: a symlink, a file over the
// size bound, one of a length that is not whole float32s, or one holding NaN is a miss, never read.
func TestEmbeddingCacheRefusesHostileFiles(t *testing.T) {
	c := embeddingCache{dir: t.TempDir()}
	c.put("good", []float32{1, 2})
	assert.Equal(t, []float32{1, 2}, c.get("good"))

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte("\x00\x00\x80\x3f"), 0o644))
	require.NoError(t, os.Symlink(secret, c.file("link")))
	huge := make([]byte, maxCachedVector+4)
	require.NoError(t, os.WriteFile(c.file("huge"), huge, 0o644))
	require.NoError(t, os.WriteFile(c.file("ragged"), []byte{1, 2, 3}, 0o644))
	require.NoError(t, os.WriteFile(c.file("nan"), []byte{0, 0, 0xc0, 0x7f}, 0o644))
	require.NoError(t, os.Mkdir(c.file("dir"), 0o755))
	for _, text := range []string{"link", "huge", "ragged", "nan", "dir", "absent"} {
		assert.Nil(t, c.get(text), text)
	}
}

// BenchmarkDecodeEmbeddings reads a reply of 10,000 vectors of 768 dimensions: as JSON arrays
// and as base64 with locum's decoder, and as arrays with a plain json.Unmarshal, the reference.
func BenchmarkDecodeEmbeddings(b *testing.B) {
	const n, dim = 10000, 768
	vecs := randomUnit(rand.New(rand.NewPCG(9, 10)), n, dim)
	type item struct {
		Index     int `json:"index"`
		Embedding any `json:"embedding"`
	}
	reply := func(base64 bool) []byte {
		data := make([]item, n)
		for i, v := range vecs {
			f := make([]float32, dim)
			for k := range v {
				f[k] = float32(v[k])
			}
			data[i] = item{Index: i, Embedding: f}
			if base64 {
				data[i].Embedding = b64(f...)
			}
		}
		raw, err := json.Marshal(map[string]any{"data": data})
		require.NoError(b, err)
		return raw
	}
	arrays, encoded := reply(false), reply(true)
	b.Run("arrays/locum", func(b *testing.B) {
		b.SetBytes(int64(len(arrays)))
		for range b.N {
			_, err := DecodeEmbeddings(arrays, n)
			require.NoError(b, err)
		}
	})
	b.Run("base64/locum", func(b *testing.B) {
		b.SetBytes(int64(len(encoded)))
		for range b.N {
			_, err := DecodeEmbeddings(encoded, n)
			require.NoError(b, err)
		}
	})
	b.Run("arrays/json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(arrays)))
		for range b.N {
			var body struct {
				Data []struct {
					Embedding []float64 `json:"embedding"`
				} `json:"data"`
			}
			require.NoError(b, json.Unmarshal(arrays, &body))
		}
	})
}

func TestDecodeBase64WithEscapedSlash(t *testing.T) {
	enc := b64(float32(math.Float32frombits(0x3ffffffc)))
	require.Contains(t, enc, "/")
	body := `{"data":[{"embedding":"` + strings.ReplaceAll(enc, "/", `\/`) + `"}]}`
	res, err := DecodeEmbeddings([]byte(body), 1)
	require.NoError(t, err)
	assert.Equal(t, []float32{math.Float32frombits(0x3ffffffc)}, res.Vectors[0])
}
