package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// EmbedResult is one vector per input, in input order.
type EmbedResult struct {
	Vectors [][]float64
	Usage   Usage
	Elapsed time.Duration
}

// BadEmbeddingError is a response that is not one finite vector of one length per input.
type BadEmbeddingError struct{ Reason string }

func (e *BadEmbeddingError) Error() string {
	return "the server's embedding response is not one finite vector of one length per input: " + e.Reason
}

// Embed sends one embeddings request for inputs.
func (c *Client) Embed(ctx context.Context, model string, inputs []string) (*EmbedResult, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	start := time.Now()
	params := openai.EmbeddingNewParams{
		Model: model,
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: inputs},
	}
	var raw []byte
	if _, err := c.embeddings.New(ctx, params, option.WithResponseBodyInto(&raw)); err != nil {
		return nil, c.transportError(err, http.MethodPost, c.BaseURL()+"/embeddings")
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
func DecodeEmbeddings(raw []byte, n int) (*EmbedResult, error) {
	var body struct {
		Data []struct {
			Index     *int            `json:"index"`
			Embedding json.RawMessage `json:"embedding"`
		} `json:"data"`
		Usage *wireUsage `json:"usage"`
	}
	if err := json.Unmarshal(nonFinite.ReplaceAll(raw, []byte(": null")), &body); err != nil {
		if nonFiniteValue.Match(raw) {
			return nil, &BadEmbeddingError{Reason: "a vector holds NaN or Infinity"}
		}
		return nil, &BadEmbeddingError{Reason: "not JSON: " + err.Error()}
	}
	if len(body.Data) != n {
		return nil, &BadEmbeddingError{Reason: fmt.Sprintf("%d vectors for %d inputs", len(body.Data), n)}
	}
	out := &EmbedResult{Vectors: make([][]float64, n), Usage: body.Usage.usage()}
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
		var vec []float64
		if err := json.Unmarshal(d.Embedding, &vec); err != nil {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d is not a list of numbers", idx)}
		}
		if len(vec) == 0 {
			return nil, &BadEmbeddingError{Reason: fmt.Sprintf("vector %d is empty", idx)}
		}
		for _, x := range vec {
			if math.IsNaN(x) || math.IsInf(x, 0) {
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
