package evidence

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
)

// Request is a reply of one JSON shape asked of the model.
type Request struct {
	// Step is the run's step the request belongs to, as the journal names it.
	Step string
	// What names the reply in a refusal ("the digest").
	What string
	// Schema is the shape asked for as structured output, where the server takes it.
	Schema map[string]any
	// Build is an attempt's request, told why the reply before it could not be used ("" for
	// the first).
	Build func(retry string) client.ChatRequest
}

// Ask asks for a reply of q's shape and reads it with parse: as structured output, or, where the
// server refuses response_format, by the instruction in the prompt alone (the same object is
// asked for there). A reply parse cannot read gets one retry, sampled apart from the first and
// told why; a second is a malformed reply.
func Ask[T any](ctx context.Context, r *engine.Run, q Request, parse func(answer string) (T, error)) (T, error) {
	var zero T
	useSchema := true
	retry := ""
	for attempt := 1; ; attempt++ {
		req := q.Build(retry)
		req.Temperature, req.Seed = engine.RetrySampling(attempt)
		if useSchema {
			req.ResponseSchema = q.Schema
		}
		res, err := r.Chat(ctx, q.Step, req)
		if err != nil {
			if useSchema && refusesSchema(err) {
				useSchema = false
				r.Emit(engine.ResponseFormatRefusedEvent{Error: err.Error()})
				attempt--
				continue
			}
			return zero, err
		}
		v, perr := parse(res.Answer)
		if perr == nil {
			return v, nil
		}
		r.Emit(engine.DigestUnusableEvent{Attempt: attempt, Error: perr.Error()})
		if attempt == 2 {
			return zero, &rails.ReplyError{Class: rails.ClassMalformed, Detail: q.What + " is not the JSON object asked for, twice: " + perr.Error()}
		}
		retry = perr.Error()
	}
}

// ReplyRoom is the max_tokens a reply of claims asks for: room for its words (max_words, two
// tokens a word, as code's words are split finer than prose's), perClaim tokens for each claim's
// JSON beside its words, and the object's own, within max_output_tokens. A model that goes on
// writing past what was asked stops there rather than after the thousands of tokens a pack's
// ceiling allows; a max_output_tokens the user chose is the room asked for. follows names the
// setting the room follows, as a template (client.ChatRequest.Room), "" where it is
// max_output_tokens.
func ReplyRoom(s *packs.Settings, perClaim int64) (room int64, follows string) {
	ceiling := s.Int(packs.MaxOutputTokens)
	if s.OverridesBuiltin(packs.MaxOutputTokens) {
		return ceiling, ""
	}
	words := s.Int(packs.MaxWords)
	room = max(256, 2*words+perClaim*int64(MaxClaims(words))+64)
	if room >= ceiling {
		return ceiling, ""
	}
	return room, "{" + packs.MaxWords.String() + "}"
}

// RetryNote is what a retry's prompt adds: why the reply before it could not be used; "" for the
// first attempt.
func RetryNote(retry string) string {
	if retry == "" {
		return ""
	}
	return fmt.Sprintf("\nYour previous reply could not be used: %s. Reply with the JSON object only.\n", retry)
}

// refusesSchema says the server refused the request for its response_format, which some servers
// and models do not take.
func refusesSchema(err error) bool {
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status < 400 || he.Status >= 600 {
		return false
	}
	m := strings.ToLower(he.Message)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") || strings.Contains(m, "grammar")
}

// JSONObject is the reply's JSON object: from its first { to its last }, so a code fence or a
// sentence around it is dropped.
func JSONObject(answer string) string {
	text := strings.TrimSpace(answer)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	return text
}
