package evidence

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/runner/scope"
)

// digestRules are summarize's: its instruction's example, and no line copied.
var digestRules = Rules{Placeholder: "one sentence"}

func TestGate(t *testing.T) {
	file := []string{"package x", "", "// Add sums two numbers.", "func Add(a, b int) int {", "\treturn a + b", "}"}
	span := scope.LineRange{Start: 3, End: 6}
	for _, tc := range []struct {
		claim  Claim
		want   string
		lines  [2]int
		reason string
	}{
		{Claim{Text: "Add sums its two integer numbers.", Lines: [2]int{3, 5}}, "supported", [2]int{3, 4}, ""},
		{Claim{Text: "The function adds the numbers it takes.", Lines: [2]int{4, 5}}, "supported", [2]int{3, 4}, ""},
		{Claim{Text: "Add sums numbers.", Lines: [2]int{1, 3}}, "unsupported", [2]int{1, 3}, "outside the span 3-6"},
		{Claim{Text: "Add sums numbers.", Lines: [2]int{5, 4}}, "unsupported", [2]int{5, 4}, "outside the span"},
		{Claim{Text: "Add subtracts the second number.", Lines: [2]int{3, 6}}, "supported", [2]int{3, 4}, ""},
		{Claim{Text: "Add multiplies matrices of floats.", Lines: [2]int{3, 6}}, "unsupported", [2]int{3, 6}, "at most 1 of the claim's 4 words"},
		{Claim{Text: "Add sums three numbers.", Lines: [2]int{3, 3}}, "supported", [2]int{3, 3}, ""},
		{Claim{Text: "Add sums 3 numbers.", Lines: [2]int{3, 3}}, "unsupported", [2]int{3, 3}, "the number 3 is not in lines 3-3"},
		{Claim{Text: "// Add sums two numbers.", Lines: [2]int{3, 3}}, "unsupported", [2]int{3, 3}, "copies a line"},
		{Claim{Text: "Claims itself.", Lines: [2]int{3, 3}, Verdict: "supported"}, "unsupported", [2]int{3, 3}, "words are in any"},
		// A real model (Qwen2.5-Coder-1.5B) copied the instruction's example as its claim.
		{Claim{Text: "One sentence.", Lines: [2]int{3, 3}}, "unsupported", [2]int{3, 3}, "the instruction's example"},
		{Claim{Text: "  ", Lines: [2]int{3, 3}}, "unsupported", [2]int{3, 3}, "no claim text"},
		{Claim{Text: "It is the one in this.", Lines: [2]int{3, 3}}, "unsupported", [2]int{3, 3}, "no word of its own"},
	} {
		got := Gate([]Claim{tc.claim}, Whole(file), span, digestRules)[0]
		assert.Equal(t, tc.want, got.Verdict, "%q: %s", tc.claim.Text, got.Reason)
		assert.Equal(t, tc.lines, got.Lines, tc.claim.Text)
		assert.Contains(t, got.Reason, tc.reason, tc.claim.Text)
		if got.Supported() {
			assert.Equal(t, normalizeSpace(strings.Join(file[got.Lines[0]-1:got.Lines[1]], " ")), got.Quote, "the quote is the file's")
		}
	}
}

// A small model's line numbers are often off: the gate finds the lines that back a claim, nearest
// the citation, and cites those.
func TestGateFindsTheLinesNearTheCitation(t *testing.T) {
	var file []string
	for i := range 40 {
		file = append(file, fmt.Sprintf("x%d = filler()", i))
	}
	file[29] = "# The constants come from the FCC version of NTSC."
	file[9] = "# The FCC version of NTSC gives the constants too."
	span := scope.LineRange{Start: 1, End: 40}
	got := Gate([]Claim{{Text: "The formulae use constants from the FCC version of NTSC.", Lines: [2]int{24, 27}}}, Whole(file), span, digestRules)[0]
	assert.Equal(t, "supported", got.Verdict, got.Reason)
	assert.Equal(t, [2]int{30, 30}, got.Lines)
	assert.Equal(t, "# The constants come from the FCC version of NTSC.", got.Quote)
}

// Markdown, as a model reads it: the markup is no word.
func TestGateReadsMarkdown(t *testing.T) {
	file := []string{"# Guide", "", "## Layout", "", "- `calc.go` holds **four** functions.", "> Quoted [advice](http://x) here.", "1. Step one runs `go test`."}
	span := scope.LineRange{Start: 1, End: 7}
	for _, tc := range []struct {
		claim  Claim
		want   string
		reason string
	}{
		{Claim{Text: "calc.go has four functions.", Lines: [2]int{5, 5}}, "supported", ""},
		{Claim{Text: "Layout", Lines: [2]int{3, 3}}, "unsupported", "copies a line"},
		{Claim{Text: "calc.go holds four functions.", Lines: [2]int{5, 5}}, "unsupported", "copies a line"},
		{Claim{Text: "The first step runs the tests with go test.", Lines: [2]int{7, 7}}, "supported", ""},
		{Claim{Text: "There is quoted advice.", Lines: [2]int{6, 6}}, "supported", ""},
		{Claim{Text: "calc.go holds 5 functions.", Lines: [2]int{5, 5}}, "unsupported", "the number 5"},
		{Claim{Text: "The guide documents deployment to production clusters.", Lines: [2]int{1, 1}}, "unsupported", "words are in any"},
	} {
		got := Gate([]Claim{tc.claim}, Whole(file), span, digestRules)[0]
		assert.Equal(t, tc.want, got.Verdict, "%q: %s", tc.claim.Text, got.Reason)
		assert.Contains(t, got.Reason, tc.reason)
	}
}

func TestMissingName(t *testing.T) {
	span := []string{"// The Go Authors", "func (s *Weighted) Acquire(ctx context.Context) error {", "max_tokens := 3", "}"}
	for _, tc := range []struct{ text, want string }{
		{"The Acquire function blocks.", "Acquire"},
		{"TryAcquire does not block.", "TryAcquire"},
		{"It sets max_tokens.", "max_tokens"},
		{"Written in Go by its authors.", ""},
		{"Acquire blocks.", ""},
		{"The Release function frees.", ""},
	} {
		assert.Equal(t, tc.want, missingName(tc.text, []string{"return nil"}, declared(span)), tc.text)
	}
}

// A claim that quotes its lines is held to the quote: the lines must hold it as written (white
// space aside), and the claim rests on the lines that do, nearest its citation.
func TestGateHoldsAQuoteToItsLines(t *testing.T) {
	file := []string{
		"+ go test ./...",
		"ok  \texample.com/a\t0.01s",
		"--- FAIL: TestLatest (0.00s)",
		`    proxy_test.go:147: got version "v1.0.0", want "v1.1.0"`,
		"FAIL\texample.com/proxy\t0.97s",
		"+ go vet ./...",
		"archive.go:79:8: txtar.File struct literal uses unkeyed fields",
	}
	span := scope.LineRange{Start: 1, End: len(file)}
	rules := Rules{Copies: true}
	for _, tc := range []struct {
		claim        Claim
		want         string
		lines        [2]int
		quote        string
		reason       string
		digestReason string
	}{
		{Claim{Text: "TestLatest fails: it got v1.0.0 and wanted v1.1.0.", Quote: `got version "v1.0.0", want "v1.1.0"`, Lines: [2]int{3, 4}},
			"supported", [2]int{3, 4}, `got version "v1.0.0", want "v1.1.0"`, "", ""},
		{Claim{Text: "TestLatest fails.", Quote: "panic: runtime error", Lines: [2]int{3, 3}},
			"unsupported", [2]int{3, 3}, "", `the quote "panic: runtime error" is not in lines 3-3, nor in any other lines of the span 1-7`, ""},
		{Claim{Text: "Vet finds a struct literal with unkeyed fields.", Quote: "struct literal uses unkeyed fields", Lines: [2]int{1, 1}},
			"supported", [2]int{6, 7}, "struct literal uses unkeyed fields", "", ""},
		{Claim{Text: "The proxy package fails.", Quote: "`FAIL   example.com/proxy`", Lines: [2]int{5, 5}},
			"supported", [2]int{5, 5}, "FAIL example.com/proxy", "", ""},
		{Claim{Text: "TestLatest fails in proxy_test.go.", Quote: "FAIL: TestLatest (0.00s) proxy_test.go:147", Lines: [2]int{3, 4}},
			"supported", [2]int{3, 4}, "FAIL: TestLatest (0.00s) proxy_test.go:147", "", ""},
		{Claim{Text: "FAIL example.com/proxy 0.97s", Lines: [2]int{5, 5}},
			"supported", [2]int{5, 5}, "FAIL example.com/proxy 0.97s", "", "copies a line"},
		{Claim{Text: "TestLatest fails.", Quote: "--- FAIL: TestLatest (0.0...", Lines: [2]int{3, 3}},
			"supported", [2]int{3, 3}, "--- FAIL: TestLatest (0.0", "", ""},
		{Claim{Text: "go test runs the tests.", Quote: "go test ./...", Lines: [2]int{1, 1}},
			"supported", [2]int{1, 1}, "go test ./...", "", ""},
		{Claim{Text: "The proxy package fails.", Quote: "...", Lines: [2]int{5, 5}},
			"supported", [2]int{5, 5}, "FAIL example.com/proxy 0.97s", "", ""},
		{Claim{Text: "TestLatest wanted v1.2.0.", Quote: "want", Lines: [2]int{4, 4}},
			"unsupported", [2]int{4, 4}, `got version "v1.0.0", want "v1.1.0"`, "the number 2 is not in lines 4-4", ""},
	} {
		got := Gate([]Claim{tc.claim}, Whole(file), span, rules)[0]
		assert.Equal(t, tc.want, got.Verdict, "%q: %s", tc.claim.Text, got.Reason)
		assert.Equal(t, tc.lines, got.Lines, tc.claim.Text)
		assert.Contains(t, got.Reason, tc.reason, tc.claim.Text)
		if got.Supported() {
			assert.Equal(t, tc.quote, got.Quote, tc.claim.Text)
		}
		if tc.digestReason != "" {
			assert.Contains(t, Gate([]Claim{tc.claim}, Whole(file), span, digestRules)[0].Reason, tc.digestReason, "a digest copies no line")
		}
	}
}

// A quote anchors the claim: its words must be in the lines around the quote, not anywhere.
func TestGateKeepsTheWordsNearTheQuote(t *testing.T) {
	var file []string
	for i := range 30 {
		file = append(file, fmt.Sprintf("step %d done", i+1))
	}
	file[2] = "+ go test ./..."
	file[25] = "archive.go:79:8: struct literal uses unkeyed fields"
	span := scope.LineRange{Start: 1, End: len(file)}
	got := Gate([]Claim{{Text: "Vet reports unkeyed fields of a struct literal.", Quote: "go test ./...", Lines: [2]int{3, 3}}}, Whole(file), span, Rules{Copies: true})[0]
	assert.Equal(t, "unsupported", got.Verdict)
	assert.Contains(t, got.Reason, "in any 8 lines that hold its quote (lines 3-3)")
	got = Gate([]Claim{{Text: "Vet reports unkeyed fields of a struct literal.", Quote: "unkeyed fields", Lines: [2]int{3, 3}}}, Whole(file), span, Rules{Copies: true})[0]
	assert.Equal(t, "supported", got.Verdict, got.Reason)
	assert.Equal(t, [2]int{26, 26}, got.Lines)
}

func TestQuoteForms(t *testing.T) {
	for q, want := range map[string][]string{
		"a b":                {"a b"},
		"`go test ./...`":    {"`go test ./...`", "go test ./...", "go test ./"},
		`"FAIL: TestX..."`:   {`"FAIL: TestX..."`, "FAIL: TestX...", "FAIL: TestX"},
		`want "v1.1.0"`:      {`want "v1.1.0"`, `want "v1.1.0`},
		"“quoted”":           {"“quoted”", "quoted"},
		"see 1.2.3 …":        {"see 1.2.3 …", "see 1.2.3"},
		"...":                {},
		"``":                 {},
		"'it''s'":            {"'it''s'", "it''s"},
		"exit status 1":      {"exit status 1"},
		"`a` and `b`":        {"`a` and `b`", "a` and `b"},
		`\"escaped\" quote"`: {`\"escaped\" quote"`, `\"escaped\" quote`},
	} {
		assert.Equal(t, want, quoteForms(q), q)
	}
	assert.Equal(t, "", normalizeQuote(" -- \t"))
	assert.Equal(t, "a b", normalizeQuote("  a \n  b "))
}
