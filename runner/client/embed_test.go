package client

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
	"github.com/locumdev/locum/runner/scripted"
)

func TestDecodeEmbeddingsBase64(t *testing.T) {
	cases := []struct {
		name, body string
		want       []float32
		err        string
	}{
		{"base64", `{"data":[{"index":0,"embedding":"` + runtest.Base64(1, -0.5) + `"}]}`, []float32{1, -0.5}, ""},
		{"arrays with exponents and spaces", `{"data":[{"index":0,"embedding":[ 1e0 , -5E-1 ]}]}`, []float32{1, -0.5}, ""},
		{"base64 not a whole float", `{"data":[{"index":0,"embedding":"AAAAAAA="}]}`, nil, "nor base64 float32s"},
		{"base64 not base64", `{"data":[{"index":0,"embedding":"%%%%"}]}`, nil, "nor base64 float32s"},
		{"base64 NaN", `{"data":[{"index":0,"embedding":"` + runtest.Base64(float32(math.NaN())) + `"}]}`, nil, "not finite"},
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
	s.On("POST", "/v1/embeddings", runtest.JSON(`{"data":[{"index":0,"embedding":"`+runtest.Base64(0.25, 0.5)+`"}]}`))
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
	arrays := runtest.JSON(`{"data":[{"index":0,"embedding":[1,0]}]}`)
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

// BenchmarkDecodeEmbeddings reads a reply of 10,000 vectors of 768 dimensions: as JSON arrays
// and as base64 with locum's decoder, and as arrays with a plain json.Unmarshal, the reference.
func BenchmarkDecodeEmbeddings(b *testing.B) {
	const n, dim = 10000, 768
	vecs := runtest.RandomUnit(rand.New(rand.NewPCG(9, 10)), n, dim)
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
				data[i].Embedding = runtest.Base64(f...)
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
	enc := runtest.Base64(float32(math.Float32frombits(0x3ffffffc)))
	require.Contains(t, enc, "/")
	body := `{"data":[{"embedding":"` + strings.ReplaceAll(enc, "/", `\/`) + `"}]}`
	res, err := DecodeEmbeddings([]byte(body), 1)
	require.NoError(t, err)
	assert.Equal(t, []float32{math.Float32frombits(0x3ffffffc)}, res.Vectors[0])
}

// An input over the embedding model's limit is told apart from other refusals, in each server's
// words, and a 400 that says so is not taken for a refusal of base64.
func TestEmbedInputTooLong(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   bool
	}{
		{"llama-server, recorded", 500, "", true},
		{"llama-server, newer", 500, `{"error":{"code":500,"message":"input (545 tokens) is too large to process. increase the physical batch size (current batch size: 512)","type":"server_error"}}`, true},
		{"vLLM", 400, `{"object":"error","message":"This model's maximum context length is 512 tokens. However, you requested 545 tokens in the input for embedding generation. Please reduce the length of the input.","type":"BadRequestError","code":400}`, true},
		{"a context exceeded", 400, `{"error":"the input length exceeds the context length"}`, true},
		{"another 500", 500, `{"error":{"message":"failed to load model"}}`, false},
		{"no such model", 404, `{"error":"model \"m\" not found"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := scripted.New()
			defer s.Close()
			reply := scripted.MustFixture("llama-server-embeddings/err_too_long_embed")
			if tc.body != "" {
				reply = scripted.Reply{Status: tc.status, JSON: json.RawMessage(tc.body)}
			}
			s.On("POST", "/v1/embeddings", reply)
			_, err := clientFor(t, s).Embed(context.Background(), "m", []string{"a"})
			var tooLong *EmbedInputTooLongError
			assert.Equal(t, tc.want, errors.As(err, &tooLong), "got %v", err)
			var he *HTTPError
			assert.True(t, errors.As(err, &he), "the server's answer stays readable: %v", err)
			if tc.status == 400 && tc.want {
				assert.Len(t, s.RequestsTo("/v1/embeddings"), 1, "not asked again for arrays")
			}
		})
	}
}
