package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/locumdev/locum/untrusted"
)

// Section is one part of a handoff: its name, as a reply and the rendering write it, and what its
// items say.
type Section struct {
	Name, Says string
}

// Sections are a handoff's parts, in the order it is read and rendered.
var Sections = []Section{
	{"work", "what the work is"},
	{"done", "what was done"},
	{"open", "what failed or is still open"},
	{"files", "a file that matters"},
	{"commands", "a command that matters"},
	{"next", "what to do next"},
}

func sectionIndex(name string) int {
	return slices.IndexFunc(Sections, func(s Section) bool { return s.Name == name })
}

// HandoffItem is one item of a handoff: its section, and its claim about the lines it cites
// with the gate's verdict.
type HandoffItem struct {
	Section string `json:"section"`
	Claim
}

// The instruction's example item: a small model copies it as an item of its own, which the gate
// refuses (its text is Rules.Placeholder; a log rarely holds its quote).
const (
	handoffPlaceholder = "one sentence"
	quotePlaceholder   = "words copied from those lines"
)

const handoffInstruction = `Compress the numbered lines of a log or other long text into a handoff for someone who will resume the work without reading them. Reply with one JSON object and nothing else:
{"handoff": [{"section": "work", "text": "` + handoffPlaceholder + `", "quote": "` + quotePlaceholder + `", "lines": [first, last]}]}
The sections: %s.
Each item says in one sentence, using the text's own names and terms, what a few lines say; its quote copies a few words exactly from those lines (a file, a command, a test name, an error); its lines are the first and last number of those lines (at most 8 lines). Give at least one work item and one next item. Do not write line numbers in the text. Use at most %d items and %d words of text in all.`

// HandoffInstruction is the system prompt that asks for a handoff of at most maxItems items and
// maxWords words of text.
func HandoffInstruction(maxItems int, maxWords int64) string {
	parts := make([]string, len(Sections))
	for i, s := range Sections {
		parts[i] = s.Name + " (" + s.Says + ")"
	}
	return fmt.Sprintf(handoffInstruction, strings.Join(parts, ", "), maxItems, maxWords)
}

// HandoffPrompt is the user prompt: the text's lines, numbered as the file numbers them (text may
// be a file's last lines), under its name, the lines the file has in all, and what the handoff is
// for where the caller said.
func HandoffPrompt(name string, text Text, total int, focus string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "File: %s\n", name)
	if f := strings.TrimSpace(focus); f != "" {
		fmt.Fprintf(&b, "Focus: %s\n", f)
	}
	r := text.Range()
	fmt.Fprintf(&b, "Lines %d-%d of %d:\n", r.Start, r.End, total)
	for i, l := range text.Lines {
		fmt.Fprintf(&b, "%d| %s\n", text.First+i, l)
	}
	return b.String()
}

// HandoffSchema is the structured output asked of the model: at most maxItems items, each a
// section, a text, a quote and the lines it rests on.
func HandoffSchema(maxItems int) map[string]any {
	names := make([]string, len(Sections))
	for i, s := range Sections {
		names[i] = s.Name
	}
	return map[string]any{
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"handoff"},
		"properties": map[string]any{
			"handoff": map[string]any{
				"type":     "array",
				"minItems": 1,
				"maxItems": maxItems,
				"items": map[string]any{
					"type":                 "object",
					"additionalProperties": false,
					"required":             []string{"section", "text", "quote", "lines"},
					"properties": map[string]any{
						"section": map[string]any{"type": "string", "enum": names},
						"text":    map[string]any{"type": "string"},
						"quote":   map[string]any{"type": "string"},
						"lines":   map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2},
					},
				},
			},
		},
	}
}

// ParseHandoff reads the model's handoff: a JSON object (a code fence or words around it
// tolerated) with a handoff array of items, each with a text and two line numbers, and a section
// and a quote where it gives them. A verdict the model adds is read and dropped: the gate gives
// its own.
func ParseHandoff(answer string) ([]HandoffItem, error) {
	var body struct {
		Handoff *[]json.RawMessage `json:"handoff"`
	}
	if err := json.Unmarshal([]byte(JSONObject(answer)), &body); err != nil {
		return nil, fmt.Errorf("not a JSON object: %v", err)
	}
	if body.Handoff == nil {
		return nil, errors.New(`no "handoff" array`)
	}
	var out []HandoffItem
	for i, raw := range *body.Handoff {
		var it struct {
			Section string  `json:"section"`
			Text    *string `json:"text"`
			Quote   string  `json:"quote"`
			Lines   []int   `json:"lines"`
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return nil, fmt.Errorf("item %d is not {section, text, quote, lines}: %v", i+1, err)
		}
		if it.Text == nil || strings.TrimSpace(*it.Text) == "" || len(it.Lines) != 2 {
			return nil, fmt.Errorf("item %d lacks a text or two line numbers", i+1)
		}
		out = append(out, HandoffItem{Section: strings.ToLower(strings.TrimSpace(it.Section)),
			Claim: Claim{Text: strings.TrimSpace(*it.Text), Quote: it.Quote, Lines: [2]int{it.Lines[0], it.Lines[1]}}})
	}
	return out, nil
}

// handoffRules are a handoff's: a line picked out as it is may be an item.
var handoffRules = Rules{Placeholder: handoffPlaceholder, Copies: true}

// GateHandoff holds each item to the lines of text (the whole file, or its last lines) with the
// evidence gate, and more: an item past the maxItems asked for, or of a section that is none of
// Sections, is unsupported too. The items come back in the order of their sections, each
// section's in the model's order.
func GateHandoff(items []HandoffItem, text Text, maxItems int) []HandoffItem {
	claims := make([]Claim, len(items))
	for i, it := range items {
		claims[i] = it.Claim
	}
	gated := Gate(claims, text, text.Range(), handoffRules)
	out := make([]HandoffItem, len(items))
	for i, it := range items {
		it.Claim = gated[i]
		switch {
		case i >= maxItems:
			it.Verdict, it.Reason = "unsupported", fmt.Sprintf("past the %d items asked for", maxItems)
		case sectionIndex(it.Section) < 0:
			it.Verdict, it.Reason = "unsupported", fmt.Sprintf("the section %q is not one of a handoff's", it.Section)
		}
		out[i] = it
	}
	slices.SortStableFunc(out, func(x, y HandoffItem) int { return order(x) - order(y) })
	return out
}

// order is where an item's section stands; an item of no section stands last.
func order(it HandoffItem) int {
	if i := sectionIndex(it.Section); i >= 0 {
		return i
	}
	return len(Sections)
}

// itemLine is an item as one line: its section, its lines, its text, and its quote where the
// text does not hold it. The model's and the file's text is data: escaped, never obeyed.
func itemLine(it HandoffItem) string {
	line := fmt.Sprintf("%s L%d-%d %s", untrusted.Escape(it.Section), it.Lines[0], it.Lines[1], untrusted.Escape(it.Text))
	if it.Quote != "" && !strings.Contains(normalizeSpace(it.Text), it.Quote) {
		line += " " + untrusted.Escape(strconv.Quote(it.Quote))
	}
	return line
}

// SupportedLines is the handoff a host may act on: each supported item as one line (itemLine),
// in the order of their sections; "" where none is supported.
func SupportedLines(items []HandoffItem) string {
	var b strings.Builder
	for _, it := range items {
		if it.Supported() {
			b.WriteString(itemLine(it) + "\n")
		}
	}
	return b.String()
}

// HandoffLines renders a handoff for a person: the supported items (SupportedLines), then the
// sections no supported item speaks for (`none: files, commands`), then `unsupported: N` and
// each unsupported item with the gate's reason.
func HandoffLines(items []HandoffItem) string {
	if len(items) == 0 {
		return "the handoff is empty\n"
	}
	var b strings.Builder
	b.WriteString(SupportedLines(items))
	var missing []string
	for _, s := range Sections {
		if !slices.ContainsFunc(items, func(it HandoffItem) bool { return it.Section == s.Name && it.Supported() }) {
			missing = append(missing, s.Name)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(&b, "none: %s\n", strings.Join(missing, ", "))
	}
	var unsupported []HandoffItem
	for _, it := range items {
		if !it.Supported() {
			unsupported = append(unsupported, it)
		}
	}
	fmt.Fprintf(&b, "unsupported: %d\n", len(unsupported))
	for _, it := range unsupported {
		fmt.Fprintf(&b, "  UNSUPPORTED %s (%s)\n", itemLine(it), untrusted.Escape(it.Reason))
	}
	return b.String()
}
