// Package summarize is locum's summarize mode: a digest of a file span whose every claim cites
// the lines it rests on, checked against them by an evidence gate.
package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/evidence"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/untrusted"
)

// Options is one digest of a file span.
type Options struct {
	File, Lines, Focus string
	// Symbol, instead of Lines, names a declaration whose lines are the span (scope.SymbolRange).
	Symbol    string
	Cwd, Root string
}

// Claim is one sentence of a digest and the gate's verdict on it. A digest's claim comes with no
// quote of the model's (ParseDigest drops one), so its quote is the cited lines as one short
// line, taken from the file by the gate.
type Claim = evidence.Claim

// digestSchema is the structured output asked of the model, with at most maxClaims claims: a
// small model under a grammar otherwise repeats claims until max_tokens. A claim is its text and
// the lines it rests on; locum takes the quote from those lines itself, since a small model asked
// to copy one exactly rarely does.
func digestSchema(maxClaims int) map[string]any {
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"digest"},
		"properties": map[string]any{
			"digest": map[string]any{
				"type":     "array",
				"minItems": 1,
				"maxItems": maxClaims,
				"items": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"required":             []string{"text", "lines"},
					"properties": map[string]any{
						"text":  map[string]any{"type": "string"},
						"lines": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2},
					},
				},
			},
		},
	}
}

// MaxClaims is how many claims a digest of maxWords words may hold.
func MaxClaims(maxWords int64) int { return evidence.MaxClaims(maxWords) }

// claimTokens is the room a digest's claim takes beside its words: its JSON and line numbers.
const claimTokens = 24

// placeholderText is the claim text the instruction shows as its example (evidence.Rules).
const placeholderText = "one sentence"

const digestInstruction = `Summarize the numbered lines of a file for a reader who will not read them. Reply with one JSON object and nothing else:
{"digest": [{"text": "` + placeholderText + `", "lines": [first, last]}]}
Each claim says in one sentence, using the file's own names and terms, what a few lines say, and cites the first and last number of those lines (at most 8 lines). Do not write line numbers in the text. Use at most %d claims and %d words of text in all.`

type summarize struct {
	opts   Options
	scope  *scope.File
	claims *[]Claim
	d      Details
}

// Details are a digest's part of its result and of its journal's run_end: the span, and the
// claims as the evidence gate found them.
type Details struct {
	// SpanDetails are the span, once scope read it.
	engine.SpanDetails
	// Gated is nil until the gate ran.
	*Gated
}

// Gated are a digest's claims after the evidence gate, its counts, and the sizes of the digest's
// supported claims and of the span it stands for.
type Gated struct {
	Claims      []Claim `json:"claims"`
	Supported   int     `json:"supported"`
	Unsupported int     `json:"unsupported"`
	Words       int     `json:"words"`
	DigestBytes int     `json:"digest_bytes"`
	SpanBytes   int     `json:"span_bytes"`
}

// Steps is the summarize workflow: scope the span under the input budget, check the
// endpoint, ask for the digest as structured output (one retry for a reply that does not parse),
// then run the evidence gate on every claim.
func Steps(opts Options, claims *[]Claim) []engine.Step {
	s := &summarize{opts: opts, claims: claims}
	return []engine.Step{
		{Name: "scope", Run: s.scopeStep},
		{Name: "connect", Run: func(ctx context.Context, r *engine.Run) error { return r.ConnectChat(ctx) }},
		{Name: "digest", Run: s.digest},
	}
}

func (s *summarize) scopeStep(_ context.Context, r *engine.Run) error {
	sc, err := scope.Read(r, s.opts.Cwd, s.opts.Root, s.opts.File, s.opts.Lines, s.opts.Symbol)
	if err != nil {
		return err
	}
	s.d.SpanDetails = sc.Details()
	r.SetDetails(&s.d)
	if len(sc.Text.Lines) == 0 {
		return &engine.BadInputError{Reason: sc.Display + " is empty: there is nothing to summarize"}
	}
	s.scope = sc
	return rails.CheckBudget("the prompt", int64(scope.PromptBytes(s.prompt(r, ""))), r.Spec.Settings.Int(packs.MaxInputBytes))
}

func (s *summarize) prompt(r *engine.Run, retry string) []client.Message {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s (%s)\n", s.scope.Display, scope.Language(s.scope.Display))
	if f := strings.TrimSpace(s.opts.Focus); f != "" {
		fmt.Fprintf(&b, "Focus: %s\n", f)
	}
	fmt.Fprintf(&b, "Lines %d-%d:\n", s.scope.Range.Start, s.scope.Range.End)
	for i, l := range s.scope.Span() {
		fmt.Fprintf(&b, "%d| %s\n", s.scope.Range.Start+i, l)
	}
	b.WriteString(evidence.RetryNote(retry))
	return []client.Message{
		{Role: "system", Content: fmt.Sprintf(digestInstruction, MaxClaims(r.Spec.Settings.Int(packs.MaxWords)), r.Spec.Settings.Int(packs.MaxWords))},
		{Role: "user", Content: b.String()},
	}
}

func (s *summarize) digest(ctx context.Context, r *engine.Run) error {
	set := r.Spec.Settings
	claims, err := evidence.Ask(ctx, r, evidence.Request{
		Step: "digest", What: "the digest", Schema: digestSchema(MaxClaims(set.Int(packs.MaxWords))),
		Build: func(retry string) client.ChatRequest {
			room, follows := evidence.ReplyRoom(set, claimTokens)
			return client.ChatRequest{Model: r.Spec.Model, Messages: s.prompt(r, retry), MaxTokens: room, Room: follows, Effort: set.String(packs.Effort), Stream: true, Narrow: scope.NarrowSettings}
		},
	}, ParseDigest)
	if err != nil {
		return err
	}
	*s.claims = gate(claims, s.scope.Text.Lines, s.scope.Range)
	return s.report(r)
}

// gate holds a digest's claims to the span's lines.
func gate(claims []Claim, lines []string, span scope.LineRange) []Claim {
	return evidence.Gate(claims, evidence.Whole(lines), span, evidence.Rules{Placeholder: placeholderText})
}

// ParseDigest reads the model's digest: a JSON object (a code fence around it is tolerated) with
// a digest array of claims, each with text and two line numbers. A quote the model adds is read
// and dropped: the gate takes the quote from the lines.
func ParseDigest(answer string) ([]Claim, error) {
	var body struct {
		Digest *[]json.RawMessage `json:"digest"`
	}
	if err := json.Unmarshal([]byte(evidence.JSONObject(answer)), &body); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if body.Digest == nil {
		return nil, errors.New(`no "digest" array`)
	}
	var out []Claim
	for i, raw := range *body.Digest {
		var c struct {
			Text  *string `json:"text"`
			Lines []int   `json:"lines"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("claim %d is not {text, lines}: %v", i+1, err)
		}
		if c.Text == nil || strings.TrimSpace(*c.Text) == "" || len(c.Lines) != 2 {
			return nil, fmt.Errorf("claim %d lacks a text or two line numbers", i+1)
		}
		out = append(out, Claim{Text: strings.TrimSpace(*c.Text), Lines: [2]int{c.Lines[0], c.Lines[1]}})
	}
	return out, nil
}

func (s *summarize) report(r *engine.Run) error {
	supported, unsupported, words := 0, 0, 0
	digestBytes := 0
	for _, c := range *s.claims {
		if c.Supported() {
			supported++
			words += len(strings.Fields(c.Text))
			digestBytes += len(c.Text) + len(fmt.Sprintf("L%d-%d \n", c.Lines[0], c.Lines[1]))
		} else {
			unsupported++
		}
	}
	spanBytes := 0
	for _, l := range s.scope.Span() {
		spanBytes += len(l) + 1
	}
	claims := *s.claims
	if claims == nil {
		claims = []Claim{}
	}
	s.d.Gated = &Gated{Claims: claims, Supported: supported, Unsupported: unsupported, Words: words, DigestBytes: digestBytes, SpanBytes: spanBytes}
	// The digest stands in for reading the span, one turn either way; it writes nothing the
	// host would have. What it saves is the span's bytes kept out of the host's context.
	r.HostWork(engine.HostWork{Read: int64(spanBytes), Turns: cost.Turns{Direct: 1, Delegated: 1}})
	r.Emit(engine.GateEvent{Supported: supported, Unsupported: unsupported})
	if len(claims) == 0 {
		return &engine.RedError{Reason: "the digest is empty: the model made no claim about the span; read the span instead"}
	}
	if supported == 0 {
		return &engine.RedError{Reason: fmt.Sprintf("no claim of the digest is backed by the file (%d unsupported): do not trust it; read the span instead", unsupported)}
	}
	return nil
}

// ClaimLines renders a digest for a person: each supported claim as `L40-52 text`, then
// `unsupported: N` and each unsupported claim with the gate's reason. The model's text is data:
// escaped, never obeyed.
func ClaimLines(claims []Claim) string {
	var b strings.Builder
	var unsupported []Claim
	for _, cl := range claims {
		if cl.Supported() {
			fmt.Fprintf(&b, "L%d-%d %s\n", cl.Lines[0], cl.Lines[1], untrusted.Escape(cl.Text))
		} else {
			unsupported = append(unsupported, cl)
		}
	}
	if len(claims) == 0 {
		b.WriteString("the digest is empty\n")
	} else {
		fmt.Fprintf(&b, "unsupported: %d\n", len(unsupported))
	}
	for _, cl := range unsupported {
		fmt.Fprintf(&b, "  UNSUPPORTED L%d-%d %s (%s)\n", cl.Lines[0], cl.Lines[1], untrusted.Escape(cl.Text), untrusted.Escape(cl.Reason))
	}
	return b.String()
}
