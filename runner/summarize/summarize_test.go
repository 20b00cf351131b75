package summarize

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scope"
)

func TestGate(t *testing.T) {
	file := []string{"package x", "", "// Add sums two numbers.", "func Add(a, b int) int {", "\treturn a + b", "}"}
	span := scope.LineRange{Start: 3, End: 6}
	claims := []Claim{
		{Text: "Add returns the total.", Lines: [2]int{3, 5}, Quote: "Add  sums\ttwo numbers."},
		{Text: "Spans lines.", Lines: [2]int{4, 5}, Quote: "int {\n\treturn a + b"},
		{Text: "Outside.", Lines: [2]int{1, 3}, Quote: "package x"},
		{Text: "Inverted.", Lines: [2]int{5, 4}, Quote: "return"},
		{Text: "Absent.", Lines: [2]int{3, 6}, Quote: "a - b"},
		{Text: "No quote.", Lines: [2]int{3, 6}, Quote: "  "},
		{Text: "Claims itself.", Lines: [2]int{3, 3}, Quote: "verified", Verdict: "supported"},
		// A real model (Qwen2.5-Coder-1.5B) copied the instruction's example as its claim, with
		// a quote that is in the file: the gate must not call that supported.
		{Text: "One sentence.", Lines: [2]int{3, 3}, Quote: "// Add sums two numbers."},
		{Text: "  ", Lines: [2]int{3, 3}, Quote: "// Add sums two numbers."},
	}
	got := Gate(claims, file, span)
	want := []string{"supported", "supported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported", "unsupported"}
	for i := range got {
		assert.Equal(t, want[i], got[i].Verdict, claims[i].Text)
	}
	assert.Contains(t, got[2].Reason, "outside the span 3-6")
	assert.Contains(t, got[4].Reason, "not in lines 3-6")
	assert.Contains(t, got[7].Reason, "the instruction's example")
	assert.Equal(t, "no claim text", got[8].Reason)
}

// Markdown, as a model reads and quotes it: the markup goes, the words stay.
func TestGateReadsMarkdown(t *testing.T) {
	file := []string{"# Guide", "", "## Layout", "", "- `calc.go` holds **four** functions.", "> Quoted [advice](http://x) here.", "1. Step one runs `go test`."}
	span := scope.LineRange{Start: 1, End: 7}
	for _, tc := range []struct {
		claim  Claim
		want   string
		reason string
	}{
		{Claim{Text: "The layout section.", Lines: [2]int{3, 3}, Quote: "Layout"}, "supported", ""},
		{Claim{Text: "Layout", Lines: [2]int{3, 3}, Quote: "## Layout"}, "unsupported", "nothing beyond its quote"},
		{Claim{Text: "## Layout.", Lines: [2]int{3, 3}, Quote: "Layout"}, "unsupported", "nothing beyond its quote"},
		{Claim{Text: "The package has four functions.", Lines: [2]int{5, 5}, Quote: "calc.go holds four functions."}, "supported", ""},
		{Claim{Text: "There is advice.", Lines: [2]int{6, 6}, Quote: "Quoted advice here."}, "supported", ""},
		{Claim{Text: "Tests run first.", Lines: [2]int{7, 7}, Quote: "Step one runs go test"}, "supported", ""},
		{Claim{Text: "The package has five functions.", Lines: [2]int{5, 5}, Quote: "calc.go holds five functions."}, "unsupported", "not in lines 5-5"},
		{Claim{Text: "Markup alone is no quote.", Lines: [2]int{5, 5}, Quote: "** **"}, "unsupported", "not in lines 5-5"},
	} {
		got := Gate([]Claim{tc.claim}, file, span)[0]
		assert.Equal(t, tc.want, got.Verdict, "%q quoting %q", tc.claim.Text, tc.claim.Quote)
		assert.Contains(t, got.Reason, tc.reason)
	}
}

// A digest Qwen2.5-Coder-1.5B-Instruct wrote on llama-server 0c1e570: every claim's text is the
// instruction's example, each quoting a heading. It was once an OK run of five supported claims.
func TestGateRefusesARealPlaceholderDigest(t *testing.T) {
	dir := filepath.Join("..", "scripted", "testdata", "real-servers", "llama-server-0c1e570-qwen-journals")
	journal, err := os.ReadFile(filepath.Join(dir, "20261201T202056Z-6c0618.jsonl"))
	require.NoError(t, err)
	var answer string
	for _, line := range strings.Split(strings.TrimSpace(string(journal)), "\n") {
		var ev struct{ Event, Answer string }
		require.NoError(t, json.Unmarshal([]byte(line), &ev))
		if ev.Event == "reply" {
			answer = ev.Answer
		}
	}
	claims, err := ParseDigest(answer)
	require.NoError(t, err)
	require.Len(t, claims, 8)
	doc, err := os.ReadFile(filepath.Join(dir, "design.md"))
	require.NoError(t, err)
	lines := strings.Split(string(doc), "\n")
	for _, c := range Gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		assert.Equal(t, "unsupported", c.Verdict, "%q quoting %q", c.Text, c.Quote)
	}
	// The same claims naming the heading they quote, as the model might next: nothing beyond
	// the quote, so still nothing supported.
	for i := range claims {
		claims[i].Text = strings.TrimLeft(claims[i].Quote, "# ")
	}
	for _, c := range Gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		assert.Equal(t, "unsupported", c.Verdict, "%q quoting %q", c.Text, c.Quote)
	}
	// The same quotes with claims of their own: the headings are there.
	for i := range claims {
		claims[i].Text = "A section of the design."
	}
	supported := 0
	for _, c := range Gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		if c.Supported() {
			supported++
		}
	}
	assert.Equal(t, 5, supported, "the gate still finds what is there")
}

func TestDigestSchemaBoundsTheClaims(t *testing.T) {
	assert.Equal(t, 30, MaxClaims(150))
	assert.Equal(t, 3, MaxClaims(1))
	assert.Equal(t, 40, MaxClaims(100000))
	digest := digestSchema(7)["properties"].(map[string]any)["digest"].(map[string]any)
	assert.Equal(t, 7, digest["maxItems"])
}

func TestParseDigest(t *testing.T) {
	claims, err := ParseDigest("```json\n{\"digest\":[{\"text\":\"t\",\"lines\":[1,2],\"quote\":\"q\",\"verified\":true}]}\n```")
	require.NoError(t, err)
	assert.Equal(t, []Claim{{Text: "t", Lines: [2]int{1, 2}, Quote: "q"}}, claims)
	for reply, want := range map[string]string{
		"no json":                   "not a JSON object",
		`{"summary":1}`:             `no "digest" array`,
		`{"digest":[{"text":"t"}]}`: "lacks",
		`{"digest":[{"text":"t","lines":[1],"quote":"q"}]}`: "lacks",
		`{"digest":[{"text":1,"lines":[1,2],"quote":"q"}]}`: "is not {text, lines, quote}",
	} {
		_, err := ParseDigest(reply)
		assert.ErrorContains(t, err, want, reply)
	}
	claims, err = ParseDigest(`{"digest":[]}`)
	require.NoError(t, err)
	assert.Empty(t, claims)
}

// BenchmarkDigestBytes compares the bytes a caller reads from a digest with the bytes of the span
// it stands for: a 300-line Go file and a scripted ten-claim digest, every claim backed.
func BenchmarkDigestBytes(b *testing.B) {
	var lines []string
	for len(lines) < 300 {
		i := len(lines)
		lines = append(lines, fmt.Sprintf("// F%03d returns its argument plus %d, for the table in the design note.", i, i),
			fmt.Sprintf("func F%03d(x int) int {", i), fmt.Sprintf("\treturn x + %d", i), "}")
	}
	lines = lines[:300]
	var claims []Claim
	for k := 0; k < 10; k++ {
		a := 1 + k*30
		claims = append(claims, Claim{Text: fmt.Sprintf("Functions from line %d add a constant to their argument.", a), Lines: [2]int{a, a + 29}, Quote: strings.TrimSpace(lines[a])})
	}
	var gated []Claim
	for range b.N {
		gated = Gate(claims, lines, scope.LineRange{Start: 1, End: 300})
	}
	digest, span := 0, 0
	for _, c := range gated {
		if !c.Supported() {
			b.Fatalf("claim %q unsupported: %s", c.Text, c.Reason)
		}
		digest += len(fmt.Sprintf("L%d-%d %s\n", c.Lines[0], c.Lines[1], c.Text))
	}
	for _, l := range lines {
		span += len(l) + 1
	}
	b.ReportMetric(float64(digest), "digest-bytes")
	b.ReportMetric(float64(span), "span-bytes")
	b.ReportMetric(float64(span)/float64(digest), "span/digest")
}

// FuzzParseDigest feeds untrusted model replies to the digest parser and the gate: the gate's
// verdicts stay its own.
func FuzzParseDigest(f *testing.F) {
	f.Add(`{"digest":[{"text":"t","lines":[1,2],"quote":"a b","verdict":"supported"}]}`)
	f.Add("```json\n{\"digest\":[]}\n```")
	f.Add(`{"digest":[{"text":"a heading","lines":[1,1],"quote":"a b"},{"text":"d","lines":[2,2],"quote":"c d e"}]}`)
	f.Fuzz(func(t *testing.T, reply string) {
		claims, err := ParseDigest(reply)
		if err != nil {
			return
		}
		file := []string{"# a `b`", "c **d** [e](f)"}
		for _, c := range Gate(claims, file, scope.LineRange{Start: 1, End: 2}) {
			if c.Supported() && (c.Lines[0] < 1 || c.Lines[1] > 2 || c.Lines[0] > c.Lines[1]) {
				t.Fatalf("a claim outside the span was supported: %+v", c)
			}
			if c.Supported() && len(ownWords(c.Text, c.Quote)) == 0 {
				t.Fatalf("a claim that says nothing beyond its quote was supported: %+v", c)
			}
		}
	})
}
