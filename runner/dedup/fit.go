package dedup

import (
	"context"
	"errors"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// minPiece is the shortest piece a text is cut into to fit the embedding model: a model that
// cannot take 256 bytes at once is not one a screen can use.
const minPiece = 256

// embedFunc asks the server for the vectors of inputs, as one request.
type embedFunc func(ctx context.Context, inputs []string) ([][]float32, error)

// fitted embeds text whole, or, where the server refuses it as longer than the model takes, in
// halves cut at a line near the middle, each cut again until it fits, and pools the pieces'
// vectors: their mean weighted by length, each scaled to length 1 first so no piece counts for
// more than its share of the text. It returns the vector and how many pieces it took.
func fitted(ctx context.Context, embed embedFunc, text string) ([]float32, int, error) {
	vecs, err := embed(ctx, []string{text})
	if err == nil {
		return vecs[0], 1, nil
	}
	var tooLong *client.EmbedInputTooLongError
	if !errors.As(err, &tooLong) || len(text) < 2*minPiece {
		return nil, 0, err
	}
	head, tail := halve(text)
	a, na, err := fitted(ctx, embed, head)
	if err != nil {
		return nil, 0, err
	}
	b, nb, err := fitted(ctx, embed, tail)
	if err != nil {
		return nil, 0, err
	}
	if len(a) != len(b) {
		return nil, 0, &client.BadEmbeddingError{Reason: "the pieces of one input have vectors of different lengths"}
	}
	return pool(a, b, float64(len(head)), float64(len(tail))), na + nb, nil
}

// halve cuts text in two at the line ending nearest its middle, or, with no line ending in its
// middle half, at the rune boundary nearest the middle.
func halve(text string) (string, string) {
	mid := len(text) / 2
	lo, hi := len(text)/4, len(text)*3/4
	best := -1
	if i := strings.LastIndexByte(text[lo:mid], '\n'); i >= 0 {
		best = lo + i + 1
	}
	if i := strings.IndexByte(text[mid:hi], '\n'); i >= 0 && (best < 0 || mid+i+1-mid < mid-best) {
		best = mid + i + 1
	}
	if best <= 0 || best >= len(text) {
		best = mid
		for best > 0 && !utf8.RuneStart(text[best]) {
			best--
		}
	}
	return text[:best], text[best:]
}

// pool is the mean of a and b, each scaled to length 1, weighted by wa and wb.
func pool(a, b []float32, wa, wb float64) []float32 {
	na, nb := norm(a), norm(b)
	out := make([]float32, len(a))
	for i := range a {
		var x float64
		if na > 0 {
			x += wa * float64(a[i]) / na
		}
		if nb > 0 {
			x += wb * float64(b[i]) / nb
		}
		out[i] = float32(x / (wa + wb))
	}
	return out
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

// embedBatch is one embeddings request, journaled and counted.
func embedBatch(ctx context.Context, r *engine.Run, model string, inputs []string) ([][]float32, error) {
	r.Emit(engine.EmbedRequestEvent{Step: "embed", Model: model, Inputs: len(inputs)})
	res, err := r.Client.Embed(ctx, model, inputs)
	if err != nil {
		r.AddUsage(client.Usage{}, 0)
		return nil, err
	}
	r.AddUsage(res.Usage, res.Elapsed)
	r.Emit(engine.EmbedReplyEvent{Step: "embed", Vectors: len(res.Vectors), Base64: res.Base64, InTokens: res.Usage.In, ElapsedMs: res.Elapsed.Milliseconds()})
	return res.Vectors, nil
}

// embedEach embeds the inputs of a batch the server refused as too long one at a time, each
// fitted to the model, and journals every input that took more than one piece.
func (d *dedup) embedEach(ctx context.Context, r *engine.Run, model string, idx []int) error {
	embed := func(ctx context.Context, inputs []string) ([][]float32, error) {
		return embedBatch(ctx, r, model, inputs)
	}
	for _, i := range idx {
		v, pieces, err := fitted(ctx, embed, d.texts[i])
		if err != nil {
			return err
		}
		if pieces > 1 {
			d.result.Fitted++
			r.Emit(engine.EmbedFittedEvent{Step: "embed", File: d.names[i], Pieces: pieces, Bytes: len(d.texts[i])})
		}
		d.vectors[i] = v
	}
	return nil
}
