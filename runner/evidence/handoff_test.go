package evidence

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseHandoff(t *testing.T) {
	items, err := ParseHandoff("```json\n{\"handoff\":[{\"section\":\" Open \",\"text\":\" t \",\"quote\":\"q\",\"lines\":[1,2],\"verdict\":\"supported\"}," +
		"{\"text\":\"u\",\"lines\":[3,3]}]}\n```")
	require.NoError(t, err)
	assert.Equal(t, []HandoffItem{
		{Section: "open", Claim: Claim{Text: "t", Quote: "q", Lines: [2]int{1, 2}}},
		{Claim: Claim{Text: "u", Lines: [2]int{3, 3}}},
	}, items, "the model's verdict is dropped; a section or a quote it leaves out is empty")
	for reply, want := range map[string]string{
		"no json":                                  "not a JSON object",
		`{"digest":[]}`:                            `no "handoff" array`,
		`{"handoff":[{"text":"t"}]}`:               "item 1 lacks a text or two line numbers",
		`{"handoff":[{"lines":[1,2]}]}`:            "item 1 lacks",
		`{"handoff":[{"text":" ","lines":[1,2]}]}`: "item 1 lacks",
		`{"handoff":[{"text":"t","lines":[1,2]},{"text":1,"lines":[1,2]}]}`: "item 2 is not {section, text, quote, lines}",
		`{"handoff":[{"text":"t","lines":[1,2,3]}]}`:                        "lacks",
		`{"handoff":{"text":"t"}}`:                                          "not a JSON object",
	} {
		_, err := ParseHandoff(reply)
		assert.ErrorContains(t, err, want, reply)
	}
	items, err = ParseHandoff(`{"handoff":[]}`)
	require.NoError(t, err)
	assert.Empty(t, items)
}

// A handoff of a log's last lines cites the file's own line numbers: an item citing a line before
// the tail is outside it. Items come back in the order of their sections; one past the items
// asked for, or of no section of a handoff's, is unsupported whatever its lines.
func TestGateHandoff(t *testing.T) {
	text := Text{First: 41, Lines: []string{
		"+ go test ./...",
		"--- FAIL: TestLatest (0.00s)",
		`    proxy_test.go:147: got version "v1.0.0", want "v1.1.0"`,
		"FAIL\texample.com/proxy\t0.97s",
		"next: make the proxy prefer releases over prereleases",
	}}
	items := []HandoffItem{
		{Section: "next", Claim: Claim{Text: "Make the proxy prefer releases.", Quote: "prefer releases", Lines: [2]int{45, 45}}},
		{Section: "open", Claim: Claim{Text: "TestLatest fails on the version it gets.", Quote: "got version", Lines: [2]int{42, 43}}},
		{Section: "work", Claim: Claim{Text: "The tests of the proxy run.", Quote: "go test", Lines: [2]int{3, 3}}},
		{Section: "blockers", Claim: Claim{Text: "The proxy package fails.", Quote: "FAIL", Lines: [2]int{44, 44}}},
		{Section: "commands", Claim: Claim{Text: "go test runs the tests.", Quote: "go test ./...", Lines: [2]int{41, 41}}},
		{Section: "done", Claim: Claim{Text: "TestLatest fails on the version it gets.", Quote: "got version", Lines: [2]int{43, 43}}},
	}
	got := GateHandoff(items, text, 5)
	var lines []string
	for _, it := range got {
		lines = append(lines, it.Section+" "+it.Verdict+" "+it.Reason)
	}
	assert.Equal(t, []string{
		"work unsupported lines 3-3 are outside the span 41-45",
		"done unsupported past the 5 items asked for",
		"open supported ",
		"commands supported ",
		"next supported ",
		`blockers unsupported the section "blockers" is not one of a handoff's`,
	}, lines)
	assert.Equal(t, [2]int{42, 43}, got[2].Lines)
	assert.Equal(t, "got version", got[2].Quote)
}

func TestHandoffLines(t *testing.T) {
	items := []HandoffItem{
		{Section: "work", Claim: Claim{Text: "The CI run of go test.", Quote: "go test ./...", Lines: [2]int{1, 1}, Verdict: "supported"}},
		{Section: "files", Claim: Claim{Text: "proxy_test.go holds the failing test.", Quote: "proxy_test.go", Lines: [2]int{3, 3}, Verdict: "supported"}},
		{Section: "open", Claim: Claim{Text: "It panics\x1b[2J.", Lines: [2]int{2, 2}, Verdict: "unsupported", Reason: "the quote \"panic\" is not in lines 2-2"}},
	}
	assert.Equal(t, "work L1-1 The CI run of go test. \"go test ./...\"\n"+
		"files L3-3 proxy_test.go holds the failing test.\n"+
		"none: done, open, commands, next\n"+
		"unsupported: 1\n"+
		"  UNSUPPORTED open L2-2 It panics\\x1b[2J. (the quote \"panic\" is not in lines 2-2)\n", HandoffLines(items))
	assert.Equal(t, "work L1-1 The CI run of go test. \"go test ./...\"\nfiles L3-3 proxy_test.go holds the failing test.\n", SupportedLines(items))
	assert.Equal(t, "the handoff is empty\n", HandoffLines(nil))
}

// The instruction names every section and the bounds, and the prompt numbers the lines as the
// file does.
func TestHandoffPrompt(t *testing.T) {
	in := HandoffInstruction(7, 90)
	for _, s := range Sections {
		assert.Contains(t, in, s.Name+" ("+s.Says+")")
	}
	assert.Contains(t, in, "at most 7 items and 90 words")
	p := HandoffPrompt("ci.log", Text{First: 99, Lines: []string{"a", "b"}}, 100, " why it failed ")
	assert.Equal(t, "File: ci.log\nFocus: why it failed\nLines 99-100 of 100:\n99| a\n100| b\n", p)
	schema := HandoffSchema(7)["properties"].(map[string]any)["handoff"].(map[string]any)
	assert.Equal(t, 7, schema["maxItems"])
	enum := schema["items"].(map[string]any)["properties"].(map[string]any)["section"].(map[string]any)["enum"]
	assert.Len(t, enum, len(Sections))
}

// FuzzParseHandoff feeds untrusted model replies to the handoff's parser and gate: every verdict
// is the gate's, a supported item cites lines of the text it was given, holds the quote it
// carries, and the rendering is one line an item.
func FuzzParseHandoff(f *testing.F) {
	f.Add(`{"handoff":[{"section":"work","text":"t","quote":"a b","lines":[41,42],"verdict":"supported"}]}`)
	f.Add("```json\n{\"handoff\":[]}\n```")
	f.Add(`{"handoff":[{"section":"open","text":"the build fails","quote":"FAIL","lines":[42,42]},{"section":"x\n","text":"d","lines":[1,1]}]}`)
	f.Fuzz(func(t *testing.T, reply string) {
		items, err := ParseHandoff(reply)
		if err != nil {
			return
		}
		text := Text{First: 41, Lines: []string{"+ go test ./...", "FAIL\texample.com/a\t0.1s  build fails"}}
		gated := GateHandoff(items, text, 3)
		require.Len(t, gated, len(items))
		for i, it := range gated {
			if !it.Supported() {
				continue
			}
			if i >= 3 || sectionIndex(it.Section) < 0 || it.Lines[0] < 41 || it.Lines[1] > 42 || it.Lines[0] > it.Lines[1] {
				t.Fatalf("an item out of bounds was supported: %+v", it)
			}
			if !strings.Contains(normalizeSpace(strings.Join(text.Span(it.Lines[0], it.Lines[1]), " ")), strings.TrimSuffix(it.Quote, "...")) {
				t.Fatalf("a supported item's quote is not its lines': %+v", it)
			}
		}
		out := HandoffLines(gated)
		if n := strings.Count(out, "\n"); n > len(gated)+3 {
			t.Fatalf("%d lines for %d items:\n%s", n, len(gated), out)
		}
	})
}
