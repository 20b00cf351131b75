// Package handoff is locum's handoff mode: a log or any long text file compressed into a bounded
// handoff (what the work is, what was done, what is open, the files and commands that matter,
// what to do next) whose every item cites the lines it rests on, held to them by the evidence
// gate. It is not the handoff a red run of another mode gives its host (engine.Handoff).
package handoff

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/runner/evidence"
	"github.com/locumdev/locum/runner/scope"
)

// Options are one handoff of a file.
type Options struct {
	File, Focus string
	// Tail, above 0, hands over the file's last Tail lines alone.
	Tail      int
	Cwd, Root string
}

// Item is one item of a handoff and the gate's verdict on it.
type Item = evidence.HandoffItem

// itemTokens is the room an item takes beside its words: its section, quote, JSON and line
// numbers (a quote of a few words, a path or a command, is about 20 tokens).
const itemTokens = 48

// Details are a handoff's part of its result and of its journal's run_end: the file and the lines
// read of it, and the items as the evidence gate found them.
type Details struct {
	// SpanDetails are the file and the lines read (the whole file, or its last lines), once
	// scope read them.
	engine.SpanDetails
	// Tail is the last lines asked for, 0 for the whole file; FileLines how many the file has.
	Tail      int `json:"tail,omitempty"`
	FileLines int `json:"file_lines,omitempty"`
	// Digest is nil until the gate ran.
	*Digest
}

// Digest is a handoff after the evidence gate: its items in the order of their sections, its
// counts, and the sizes of its supported items and of the lines it stands for.
type Digest struct {
	Items       []Item `json:"items"`
	Supported   int    `json:"supported"`
	Unsupported int    `json:"unsupported"`
	Words       int    `json:"words"`
	DigestBytes int    `json:"digest_bytes"`
	SpanBytes   int    `json:"span_bytes"`
}

type handoff struct {
	opts  Options
	tail  *scope.Tail
	items *[]Item
	d     Details
}

// Steps are the handoff's: read the file's end under the input budget, check the endpoint, ask for
// the handoff as structured output (one retry for a reply that does not parse), then hold every
// item to its lines. They fill items.
func Steps(opts Options, items *[]Item) []engine.Step {
	h := &handoff{opts: opts, items: items}
	return []engine.Step{
		{Name: "scope", Run: h.scopeStep},
		{Name: "connect", Run: func(ctx context.Context, r *engine.Run) error { return r.ConnectChat(ctx) }},
		{Name: "compress", Run: h.compress},
	}
}

func (h *handoff) scopeStep(_ context.Context, r *engine.Run) error {
	if h.opts.Tail < 0 {
		return engine.BadInputf("{tail} %d: want a number of lines from 1", h.opts.Tail)
	}
	t, err := scope.ReadTail(r, h.opts.Cwd, h.opts.Root, h.opts.File, h.opts.Tail)
	if err != nil {
		return err
	}
	h.tail = t
	h.d.Tail, h.d.FileLines = h.opts.Tail, t.Total
	h.d.SpanDetails = engine.SpanDetails{File: t.Display}
	if len(t.Lines) > 0 {
		h.d.Lines = h.text().Range().String()
	}
	r.SetDetails(&h.d)
	limit := r.Spec.Settings.Int(packs.MaxInputBytes)
	if t.Cut {
		what, size := t.Display, t.Size
		if h.opts.Tail > 0 {
			what, size = fmt.Sprintf("the last %d lines of %s", h.opts.Tail, t.Display), -1
		}
		return &rails.BudgetError{What: what, Size: size, Limit: limit, Remedy: h.remedy(r, limit)}
	}
	if len(t.Lines) == 0 {
		return &engine.BadInputError{Reason: t.Display + " is empty: there is nothing to hand over"}
	}
	if n := int64(scope.PromptBytes(h.prompt(r, h.text(), ""))); n > limit {
		return &rails.BudgetError{What: "the prompt", Size: n, Limit: limit, Remedy: h.remedy(r, limit)}
	}
	return nil
}

// text is the lines read, numbered as the file numbers them.
func (h *handoff) text() evidence.Text {
	return evidence.Text{Lines: h.tail.Lines, First: h.tail.First}
}

// remedy is the advice on a file, or a tail of it, over the input budget: the most last lines
// whose prompt fits it, which the file's end read under the budget holds.
func (h *handoff) remedy(r *engine.Run, limit int64) string {
	lines := h.tail.Lines
	last := h.tail.First + len(lines) - 1
	fits := func(m int) bool {
		text := evidence.Text{Lines: lines[len(lines)-m:], First: last - m + 1}
		return int64(scope.PromptBytes(h.prompt(r, text, ""))) <= limit
	}
	// The prompt grows with every line: the first count that does not fit, less one.
	m := sort.Search(len(lines)+1, func(m int) bool { return m > 0 && !fits(m) }) - 1
	if m < 1 {
		return "not even its last line fits in it"
	}
	return fmt.Sprintf("take its last lines with {tail} %d, the most that fit", m)
}

func (h *handoff) prompt(r *engine.Run, text evidence.Text, retry string) []client.Message {
	words := r.Spec.Settings.Int(packs.MaxWords)
	user := evidence.HandoffPrompt(h.tail.Display, text, h.tail.Total, h.opts.Focus) + evidence.RetryNote(retry)
	return []client.Message{
		{Role: "system", Content: evidence.HandoffInstruction(evidence.MaxClaims(words), words)},
		{Role: "user", Content: user},
	}
}

func (h *handoff) compress(ctx context.Context, r *engine.Run) error {
	set := r.Spec.Settings
	maxItems := evidence.MaxClaims(set.Int(packs.MaxWords))
	items, err := evidence.Ask(ctx, r, evidence.Request{
		Step: "compress", What: "the handoff", Schema: evidence.HandoffSchema(maxItems),
		Build: func(retry string) client.ChatRequest {
			room, follows := evidence.ReplyRoom(set, itemTokens)
			return client.ChatRequest{Model: r.Spec.Model, Messages: h.prompt(r, h.text(), retry), MaxTokens: room, Room: follows,
				Effort: set.String(packs.Effort), Stream: true, Narrow: narrow}
		},
	}, evidence.ParseHandoff)
	if err != nil {
		return err
	}
	*h.items = evidence.GateHandoff(items, h.text(), maxItems)
	return h.report(r)
}

// narrow is how a user narrows a handoff's input, for advice (rails.Words).
const narrow = "{tail}"

func (h *handoff) report(r *engine.Run) error {
	items := *h.items
	if items == nil {
		items = []Item{}
	}
	dg := &Digest{Items: items, DigestBytes: len(evidence.SupportedLines(items))}
	for _, it := range items {
		if it.Supported() {
			dg.Supported++
			dg.Words += len(strings.Fields(it.Text))
		} else {
			dg.Unsupported++
		}
	}
	for _, l := range h.tail.Lines {
		dg.SpanBytes += len(l) + 1
	}
	h.d.Digest = dg
	// The handoff stands in for the host reading the lines it read (the log's end) itself, one
	// turn either way; it writes nothing the host would have. What it saves is those lines'
	// bytes kept out of the host's context.
	r.HostWork(engine.HostWork{Read: int64(dg.SpanBytes), Turns: cost.Turns{Direct: 1, Delegated: 1}})
	r.Emit(engine.GateEvent{Supported: dg.Supported, Unsupported: dg.Unsupported})
	if len(items) == 0 {
		return &engine.RedError{Reason: "the handoff is empty: the model made no item of the lines; read them instead"}
	}
	if dg.Supported == 0 {
		return &engine.RedError{Reason: fmt.Sprintf("no item of the handoff is backed by the lines (%d unsupported): do not trust it; read the lines instead", dg.Unsupported)}
	}
	return nil
}
