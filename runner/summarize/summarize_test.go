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
	for _, c := range gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		assert.Equal(t, "unsupported", c.Verdict, "%q at %v", c.Text, c.Lines)
	}
	// The same claims saying nothing of the design's own: still nothing supported.
	for i := range claims {
		claims[i].Text = "A section of the design."
	}
	for _, c := range gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		assert.Equal(t, "unsupported", c.Verdict, "%q at %v", c.Text, c.Lines)
	}
}

func TestDigestSchemaBoundsTheClaims(t *testing.T) {
	assert.Equal(t, 12, MaxClaims(150))
	assert.Equal(t, 3, MaxClaims(1))
	assert.Equal(t, 20, MaxClaims(100000))
	digest := digestSchema(7)["properties"].(map[string]any)["digest"].(map[string]any)
	assert.Equal(t, 7, digest["maxItems"])
}

func TestParseDigest(t *testing.T) {
	claims, err := ParseDigest("```json\n{\"digest\":[{\"text\":\"t\",\"lines\":[1,2],\"quote\":\"q\",\"verified\":true}]}\n```")
	require.NoError(t, err)
	assert.Equal(t, []Claim{{Text: "t", Lines: [2]int{1, 2}}}, claims, "the model's quote and verdict are dropped")
	for reply, want := range map[string]string{
		"no json":                   "not a JSON object",
		`{"summary":1}`:             `no "digest" array`,
		`{"digest":[{"text":"t"}]}`: "lacks",
		`{"digest":[{"text":"t","lines":[1],"quote":"q"}]}`: "lacks",
		`{"digest":[{"text":1,"lines":[1,2]}]}`:             "is not {text, lines}",
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
		// The first function whose comment lies in the claim's lines.
		j := (a - 1 + 3) / 4 * 4
		claims = append(claims, Claim{Text: fmt.Sprintf("F%03d returns its argument plus %d.", j, j), Lines: [2]int{a, a + 29}})
	}
	var gated []Claim
	for range b.N {
		gated = gate(claims, lines, scope.LineRange{Start: 1, End: 300})
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
		for _, c := range gate(claims, file, scope.LineRange{Start: 1, End: 2}) {
			if c.Supported() && (c.Lines[0] < 1 || c.Lines[1] > 2 || c.Lines[0] > c.Lines[1]) {
				t.Fatalf("a claim outside the span was supported: %+v", c)
			}
			if c.Supported() && c.Quote != strings.Join(strings.Fields(strings.Join(file[c.Lines[0]-1:c.Lines[1]], " ")), " ") {
				t.Fatalf("a supported claim's quote is not its lines': %+v", c)
			}
		}
	})
}
