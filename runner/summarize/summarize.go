// Package summarize is locum's summarize mode: a digest of a file span whose every claim cites
// lines and quotes them, checked by an evidence gate.
package summarize

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/scope"
	"github.com/locumdev/locum/untrusted"
)

// Options is one digest of a file span.
type Options struct {
	File, Lines, Focus string
	// Symbol, instead of Lines, names a Go declaration whose lines are the span.
	Symbol    string
	Cwd, Root string
}

// Claim is one sentence of a digest and the gate's verdict on it. The verdict is the gate's
// alone: whatever the model says about its own claims is ignored.
type Claim struct {
	Text    string `json:"text"`
	Lines   [2]int `json:"lines"`
	Quote   string `json:"quote"`
	Verdict string `json:"verdict"` // supported or unsupported
	Reason  string `json:"reason,omitempty"`
}

// Supported reports the gate's verdict.
func (c Claim) Supported() bool { return c.Verdict == "supported" }

// digestSchema is the structured output asked of the model, with at most maxClaims claims: a
// small model under a grammar otherwise repeats claims until max_tokens.
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
					"required":             []string{"text", "lines", "quote"},
					"properties": map[string]any{
						"text":  map[string]any{"type": "string"},
						"lines": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2},
						"quote": map[string]any{"type": "string"},
					},
				},
			},
		},
	}
}

// MaxClaims is how many claims a digest of maxWords words may hold: one per five words, from 3
// to 40.
func MaxClaims(maxWords int64) int {
	return int(min(max(maxWords/5, 3), 40))
}

// placeholderText is the claim text the instruction shows as its example. A small model copies it
// as the claim itself, quoting a real line; such a claim says nothing, however good its quote.
const placeholderText = "one sentence"

const digestInstruction = `Summarize the numbered lines of a file for a reader who will not read them. Reply with one JSON object and nothing else:
{"digest": [{"text": "` + placeholderText + `", "lines": [first, last], "quote": "a short excerpt copied exactly from those lines"}]}
Each claim says in your own words what the lines say, cites the first and last line number it rests on and quotes them exactly. Use at most %d claims and %d words of text in all.`

type summarize struct {
	opts   Options
	scope  *scope.File
	claims *[]Claim
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
	if retry != "" {
		fmt.Fprintf(&b, "\nYour previous reply could not be used: %s. Reply with the JSON object only.\n", retry)
	}
	return []client.Message{
		{Role: "system", Content: fmt.Sprintf(digestInstruction, MaxClaims(r.Spec.Settings.Int(packs.MaxWords)), r.Spec.Settings.Int(packs.MaxWords))},
		{Role: "user", Content: b.String()},
	}
}

func (s *summarize) digest(ctx context.Context, r *engine.Run) error {
	set := r.Spec.Settings
	useSchema := true
	retry := ""
	for attempt := 1; ; attempt++ {
		req := client.ChatRequest{Model: r.Spec.Model, Messages: s.prompt(r, retry), MaxTokens: set.Int(packs.MaxOutputTokens), Effort: set.String(packs.Effort), Stream: true, Narrow: scope.NarrowSettings}
		req.Temperature, req.Seed = engine.RetrySampling(attempt)
		if useSchema {
			req.ResponseSchema = digestSchema(MaxClaims(set.Int(packs.MaxWords)))
		}
		res, err := r.Chat(ctx, "digest", req)
		if err != nil {
			if useSchema && refusesSchema(err) {
				// The instruction in the prompt asks for the same object.
				useSchema = false
				r.Emit(engine.ResponseFormatRefusedEvent{Error: err.Error()})
				attempt--
				continue
			}
			return err
		}
		claims, perr := ParseDigest(res.Answer)
		if perr == nil {
			*s.claims = Gate(claims, s.scope.Text.Lines, s.scope.Range)
			return s.report(r)
		}
		r.Emit(engine.DigestUnusableEvent{Attempt: attempt, Error: perr.Error()})
		if attempt == 2 {
			return &rails.ReplyError{Class: rails.ClassMalformed, Detail: "the digest is not the JSON object asked for, twice: " + perr.Error()}
		}
		retry = perr.Error()
	}
}

func refusesSchema(err error) bool {
	var he *client.HTTPError
	if !errors.As(err, &he) || he.Status < 400 || he.Status >= 600 {
		return false
	}
	m := strings.ToLower(he.Message)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") || strings.Contains(m, "grammar")
}

// ParseDigest reads the model's digest: a JSON object (a code fence around it is tolerated) with
// a digest array of claims, each with text, two line numbers and a quote.
func ParseDigest(answer string) ([]Claim, error) {
	text := strings.TrimSpace(answer)
	if i, j := strings.Index(text, "{"), strings.LastIndex(text, "}"); i >= 0 && j > i {
		text = text[i : j+1]
	}
	var body struct {
		Digest *[]json.RawMessage `json:"digest"`
	}
	if err := json.Unmarshal([]byte(text), &body); err != nil {
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
			Quote *string `json:"quote"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, fmt.Errorf("claim %d is not {text, lines, quote}: %v", i+1, err)
		}
		if c.Text == nil || strings.TrimSpace(*c.Text) == "" || c.Quote == nil || len(c.Lines) != 2 {
			return nil, fmt.Errorf("claim %d lacks a text, two line numbers or a quote", i+1)
		}
		out = append(out, Claim{Text: strings.TrimSpace(*c.Text), Lines: [2]int{c.Lines[0], c.Lines[1]}, Quote: *c.Quote})
	}
	return out, nil
}

// Gate is the evidence gate: a claim is supported only when it says something of its own (its
// text has words beyond the instruction's example and beyond its quote: a claim that only names
// the heading it quotes says nothing), its lines lie inside the span and its quote occurs within
// those lines of the file, whitespace-normalised, or else once markdown's markup is taken out of
// both (a model that copies a line drops its backticks and bold marks).
func Gate(claims []Claim, fileLines []string, span scope.LineRange) []Claim {
	out := make([]Claim, len(claims))
	for i, c := range claims {
		a, b := c.Lines[0], c.Lines[1]
		c.Verdict, c.Reason = "unsupported", ""
		quote := normalizeSpace(c.Quote)
		text := strings.ToLower(strings.Trim(normalizeSpace(c.Text), ".!;: "))
		switch {
		case text == "":
			c.Reason = "no claim text"
		case text == placeholderText:
			c.Reason = fmt.Sprintf("the text is the instruction's example (%q), not a claim", placeholderText)
		case len(ownWords(c.Text, c.Quote)) == 0:
			c.Reason = "the text says nothing beyond its quote"
		case a < span.Start || b > span.End || a > b:
			c.Reason = fmt.Sprintf("lines %d-%d are outside the span %d-%d", a, b, span.Start, span.End)
		case quote == "":
			c.Reason = "no quote"
		case !quoted(quote, fileLines[a-1:b]):
			c.Reason = fmt.Sprintf("the quote is not in lines %d-%d", a, b)
		default:
			c.Verdict = "supported"
		}
		out[i] = c
	}
	return out
}

func normalizeSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// quoted says the whitespace-normalised quote occurs in lines, as they are or with markdown's
// markup taken out of both.
func quoted(quote string, lines []string) bool {
	if strings.Contains(normalizeSpace(strings.Join(lines, " ")), quote) {
		return true
	}
	plain := make([]string, len(lines))
	for i, l := range lines {
		plain[i] = plainMarkdown(l)
	}
	q := normalizeSpace(plainMarkdown(quote))
	return q != "" && strings.Contains(normalizeSpace(strings.Join(plain, " ")), q)
}

var (
	// lineMarkup is what starts a markdown line without being its text: quote markers, a heading's
	// hashes, a list item's bullet or number.
	lineMarkup = regexp.MustCompile(`^\s*(?:>\s*)*(?:#{1,6}\s+|[-*+]\s+|[0-9]+[.)]\s+)?`)
	// link is [text](target), whose text is what a reader reads.
	link = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)
	// emphasis is the inline markup that cannot be code: code spans and bold marks. A single * or
	// __ stays, as a multiplication or a Python name holds them.
	emphasis = strings.NewReplacer("`", "", "**", "")
)

// plainMarkdown is a line with markdown's markup taken out.
func plainMarkdown(s string) string {
	s = lineMarkup.ReplaceAllString(s, "")
	s = link.ReplaceAllString(s, "$1")
	return emphasis.Replace(s)
}

// placeholderWords are the words of the instruction's example text.
var placeholderWords = wordsOf(placeholderText)

// ownWords are the words of a claim's text that are neither in the instruction's example nor in
// its quote: what the claim says beyond the line it points at.
func ownWords(text, quote string) []string {
	inQuote := map[string]bool{}
	for _, w := range wordsOf(quote) {
		inQuote[w] = true
	}
	var out []string
	for _, w := range wordsOf(text) {
		if !inQuote[w] && !slices.Contains(placeholderWords, w) {
			out = append(out, w)
		}
	}
	return out
}

// wordsOf is s's words, lower-cased: its runs of letters and digits.
func wordsOf(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
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
	r.Detail("claims", claims)
	r.Detail("supported", supported)
	r.Detail("unsupported", unsupported)
	r.Detail("words", words)
	r.Detail("digest_bytes", digestBytes)
	r.Detail("span_bytes", spanBytes)
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
