package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/locumdev/locum/rails"
)

// EmbedResult is one vector per input, in input order.
type EmbedResult struct {
	Vectors [][]float32
	Usage   Usage
	Elapsed time.Duration
	// Base64 says the server sent the vectors as base64 float32s.
	Base64 bool
}

// BadEmbeddingError is a response that is not one finite vector of one length per input.
type BadEmbeddingError struct {
	Reason string
	// MaybeStaleCache is a mismatch that cached vectors may explain: the message says how to
	// embed again.
	MaybeStaleCache bool
}

func (e *BadEmbeddingError) Error() string { return e.Words(rails.FlagName) }

// Words is the message with the cache setting named by name.
func (e *BadEmbeddingError) Words(name func(string) string) string {
	msg := "the server's embedding response is not one finite vector of one length per input: " + e.Reason
	if e.MaybeStaleCache {
		msg += " (a stale cache? run with " + name("no_cache") + ")"
	}
	return msg
}

// Embed sends one embeddings request for inputs. It asks for base64 float32s, a quarter of the
// bytes of JSON decimals and no number parsing; a server that refuses the field with a 400 or
// 422 is asked again for JSON arrays, and this client asks it for arrays from then on. A server
// that ignores the field and sends arrays is read as well.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) (*EmbedResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	c.mu.Lock()
	floatsOnly := c.embedFloats
	c.mu.Unlock()
	params := openai.EmbeddingNewParams{
		Model: model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
	}
	if !floatsOnly {
		params.EncodingFormat = openai.EmbeddingNewParamsEncodingFormatBase64
	}
	var raw []byte
	_, err := c.embeddings.New(ctx, params, option.WithResponseBodyInto(&raw))
	var he *HTTPError
	if err != nil && !floatsOnly && errors.As(err, &he) && (he.Status == http.StatusBadRequest || he.Status == http.StatusUnprocessableEntity) && !inputTooLong.MatchString(he.Message) {
		c.mu.Lock()
		c.embedFloats = true
		c.mu.Unlock()
		params.EncodingFormat = ""
		raw = nil
		_, err = c.embeddings.New(ctx, params, option.WithResponseBodyInto(&raw))
	}
	if err != nil {
		return nil, embedInputTooLong(c.transportError(err, http.MethodPost, c.BaseURL()+"/embeddings"))
	}
	res, err := DecodeEmbeddings(raw, len(inputs))
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// nonFiniteValue finds NaN or Infinity written as a bare number, which is not JSON.
var nonFiniteValue = regexp.MustCompile(`[\[,:]\s*-?(NaN|Infinity)\s*[\],}]`)

// DecodeEmbeddings reads an embeddings response for n inputs, placing each vector by its index.
// Each vector is a base64 string of little-endian float32s or a JSON array of numbers; the
// envelope is decoded once with the vectors left raw, and each vector is then read by a scanner
// of its own rather than a second general JSON pass.
func DecodeEmbeddings(raw []byte, n int) (*EmbedResult, error) {
	var body struct {
		Data []struct {
			Index     *int            `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage *wireUsage `json:"usage"`
	}
	clean := raw
	// The regular expression costs more than the decoding; most replies never need it.
	if bytes.Contains(raw, []byte("NaN")) || bytes.Contains(raw, []byte("Infinity")) {
		clean = nonFinite.ReplaceAll(raw, []byte(": null"))
	}
	if err := json.Unmarshal(clean, &body); err != nil {
		if nonFiniteValue.Match(raw) {
			return nil, &BadEmbeddingError{Reason: "a vector holds NaN or Infinity"}
		}
		return nil, &BadEmbeddingError{Reason: "not JSON: " + err.Error()}
	}
	if len(body.Data) != n {
		return nil, &BadEmbeddingError{Reason: fmt.Sprintf("%d vectors for %d inputs", len(body.Data), n)}
	}
	out := &EmbedResult{Vectors: make([][]float32, n), Usage: body.Usage.usage()}
	dim := -1
	for pos, d := range body.Data {
		idx := pos
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("index %d out of range", idx)}
		}
		if out.Vectors[idx] != nil {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("index %d given twice", idx)}
		}
		vec, b64, err := decodeVector(d.Embedding)
		if err != nil {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d %v", idx, err)}
		}
		out.Base64 = out.Base64 || b64
		if len(vec) == 0 {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d is empty", idx)}
		}
		for _, x := range vec {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d holds a value that is not finite", idx)}
			}
		}
		if dim >= 0 && len(vec) != dim {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d has length %d, others %d", idx, len(vec), dim)}
		}
		dim = len(vec)
		out.Vectors[idx] = vec
	}
	return out, nil
}

var errNotNumbers = errors.New("is not a list of numbers nor base64 float32s")

// decodeVector reads one embedding as sent: a JSON string of base64 float32s, or an array of
// numbers. The envelope was valid JSON, so the array holds only JSON values; anything in it but
// numbers is refused.
func decodeVector(raw json.RawMessage) ([]float32, bool, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if len(raw) < 2 || raw[len(raw)-1] != '"' {
			return nil, true, errNotNumbers
		}
		// Base64 needs no JSON escapes, so the text between the quotes is the string itself,
		// unless a server escaped a character it need not have ("\/").
		text := raw[1 : len(raw)-1]
		if bytes.IndexByte(text, '\\') >= 0 {
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return nil, true, errNotNumbers
			}
			text = []byte(s)
		}
		data := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
		size, err := base64.StdEncoding.Decode(data, text)
		if err != nil || size%4 != 0 {
			return nil, true, errNotNumbers
		}
		data = data[:size]
		vec := make([]float32, len(data)/4)
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:]))
		}
		return vec, true, nil
	}
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false, errNotNumbers
	}
	body := bytes.TrimSpace(raw[1 : len(raw)-1])
	if len(body) == 0 {
		return []float32{}, false, nil
	}
	vec := make([]float32, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		end := bytes.IndexByte(body, ',')
		if end < 0 {
			end = len(body)
		}
		x, err := strconv.ParseFloat(string(bytes.TrimSpace(body[:end])), 32)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, false, errNotNumbers
		}
		vec = append(vec, float32(x))
		if end == len(body) {
			break
		}
		body = body[end+1:]
	}
	return vec, false, nil
}

// EmbedInputTooLongError is an embeddings request the server refused because an input is longer
// than the model takes in one piece: llama-server's "input (545 tokens) is too large to
// process" (its physical batch), vLLM's and LM Studio's context refusal. Which input of a batch
// it was, the server does not say.
type EmbedInputTooLongError struct {
	Err *HTTPError
}

func (e *EmbedInputTooLongError) Error() string {
	return "an input is longer than the embedding model takes: " + e.Err.Error()
}

func (e *EmbedInputTooLongError) Unwrap() error { return e.Err }

// inputTooLong matches the servers' words for an embedding input over the model's limit.
var inputTooLong = regexp.MustCompile(`(?i)too (large|long) to process|input .{0,40}too (large|long)|maximum context length|exceeds? (the )?(model'?s? )?(context|maximum|max)`)

// embedInputTooLong reads an HTTP error as an input over the model's limit, where it says so.
func embedInputTooLong(err error) error {
	var he *HTTPError
	if errors.As(err, &he) && he.Status >= 400 && he.Status < 600 && inputTooLong.MatchString(he.Message) {
		return &EmbedInputTooLongError{Err: he}
	}
	return err
}
