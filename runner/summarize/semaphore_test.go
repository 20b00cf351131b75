package summarize

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/scope"
)

// TestGateHoldsANamedFunctionToItsLines replays a real digest (Qwen2.5-Coder-1.5B on llama-server,
// of golang.org/x/sync's semaphore.go, BSD licence beside it): the model cited the doc comment of
// NewWeighted for claims about TryAcquire, Acquire and Release, whose words the comment shares.
// A claim that names a function of the file is supported only by lines that hold that name.
func TestGateHoldsANamedFunctionToItsLines(t *testing.T) {
	dir := filepath.Join("testdata", "semaphore")
	doc, err := os.ReadFile(filepath.Join(dir, "semaphore.go.txt"))
	require.NoError(t, err)
	answer, err := os.ReadFile(filepath.Join(dir, "reply.json"))
	require.NoError(t, err)
	claims, err := ParseDigest(string(answer))
	require.NoError(t, err)
	lines := strings.Split(string(doc), "\n")
	for _, c := range gate(claims, lines, scope.LineRange{Start: 1, End: len(lines)}) {
		t.Logf("%s L%d-%d %s (%s)", c.Verdict, c.Lines[0], c.Lines[1], c.Text, c.Reason)
		if c.Verdict != "supported" {
			continue
		}
		cited := strings.Join(lines[c.Lines[0]-1:c.Lines[1]], "\n")
		for _, name := range []string{"NewWeighted", "TryAcquire", "Acquire", "Release", "notifyWaiters"} {
			if strings.Contains(c.Text, "The "+name+" function") {
				assert.Contains(t, cited, name, "a supported claim about %s cites lines that hold it: %q at %v", name, c.Text, c.Lines)
			}
		}
	}
}
