package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/spec"
)

// lines is n numbered lines, each with text a JSON string escapes (a tab, quotes, < and &).
func lines(prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%s %d\t\"<a & b>\"\n", prefix, i+1)
	}
	return b.String()
}

// TestHandoffIsBounded holds every handoff to MaxHandoffBytes as its JSON carries it, Bytes to
// that size, and its cuts to what they say: the diff kept from its start, the verify's tail from
// its end, each at whole lines.
func TestHandoffIsBounded(t *testing.T) {
	for _, tc := range []struct {
		name      string
		diff      string
		tail      string
		cut       []string
		keepDiff  string // a line the cut diff still holds
		keepTail  string // a line the cut tail still holds
		dropTail  string // a line the cut tail no longer holds
		tailStart string // what the cut tail begins with
	}{
		{name: "small: nothing cut", diff: lines("+d", 3), tail: lines("t", 3), keepDiff: "+d 3", keepTail: "t 1"},
		{name: "a long diff: cut from its end", diff: lines("+d", 400), tail: lines("t", 3),
			cut: []string{"diff: "}, keepDiff: "+d 1\t", keepTail: "t 3"},
		{name: "a long tail: cut from its start", diff: lines("+d", 3), tail: lines("t", 400),
			cut: []string{"verify_tail: the last "}, keepDiff: "+d 3", keepTail: "t 400", dropTail: "t 1\t", tailStart: "["},
		{name: "both long: both cut", diff: lines("+d", 400), tail: lines("t", 400),
			cut: []string{"diff: ", "verify_tail: "}, keepDiff: "+d 1\t", keepTail: "t 400", dropTail: "t 1\t"},
		{name: "a tail of one long line: its end kept", diff: lines("+d", 2), tail: strings.Repeat("é<", 5000) + "END",
			cut: []string{"verify_tail: the last "}, keepTail: "END", tailStart: "[cut]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHandoff("red", HandoffDraft{Rule: "the rule", Attempt: new(2), Diff: tc.diff, Verified: true, VerifyTail: new(tc.tail), Next: "do it"})
			data, err := json.Marshal(h)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(data), MaxHandoffBytes)
			assert.Equal(t, len(data), h.Bytes, "Bytes is the handoff's own size")
			require.Len(t, h.Cut, len(tc.cut), "%q", h.Cut)
			for i, c := range tc.cut {
				assert.True(t, strings.HasPrefix(h.Cut[i], c), "%q", h.Cut[i])
			}
			require.NotNil(t, h.Diff)
			require.NotNil(t, h.VerifyTail)
			if tc.keepDiff != "" {
				assert.Contains(t, *h.Diff, tc.keepDiff)
			}
			assert.Contains(t, *h.VerifyTail, tc.keepTail)
			if tc.dropTail != "" {
				assert.NotContains(t, *h.VerifyTail, tc.dropTail)
			}
			if tc.tailStart != "" {
				assert.True(t, strings.HasPrefix(*h.VerifyTail, tc.tailStart), "%.40q", *h.VerifyTail)
			}
			if len(tc.cut) == 0 {
				assert.Equal(t, tc.diff, *h.Diff)
				assert.Equal(t, tc.tail, *h.VerifyTail)
			}
		})
	}
}

// TestHandoffWithoutAttempt says why there is no diff rather than inventing one.
func TestHandoffWithoutAttempt(t *testing.T) {
	h := NewHandoff("unchanged", HandoffDraft{Rule: "the rule", NoDiff: "every reply left the span as it was", Next: "do it"})
	assert.Nil(t, h.Diff)
	assert.Nil(t, h.Attempt)
	assert.Nil(t, h.VerifyTail)
	require.NotNil(t, h.NoDiff)
	assert.Equal(t, "every reply left the span as it was", *h.NoDiff)
	data, err := json.Marshal(h)
	require.NoError(t, err)
	assert.Equal(t, len(data), h.Bytes)
	assert.Contains(t, string(data), `"diff":null,"no_diff":"every reply left the span as it was"`)
}

// TestWorkflowHandoffIsBoundedInTotal shares the bound among a workflow's red items: a few fit
// whole, many are each cut, and past what room leaves, the rest are named in cut.
func TestWorkflowHandoffIsBoundedInTotal(t *testing.T) {
	item := func(i int) ItemHandoff {
		h := NewHandoff("red", HandoffDraft{Rule: "item rule", Attempt: new(1), Diff: lines(fmt.Sprintf("+item%d", i), 60),
			Verified: true, VerifyTail: new(lines("t", 30)), Next: "do it"})
		return ItemHandoff{Step: "edit", Index: i, Item: fmt.Sprintf("f%d.go", i), Run: "20260101T000000Z-00000" + fmt.Sprint(i%10), Handoff: h}
	}
	for _, tc := range []struct {
		items, shown int
		cutItems     bool
	}{{1, 1, false}, {3, 3, false}, {30, 0, true}} {
		t.Run(fmt.Sprint(tc.items, " items"), func(t *testing.T) {
			var items []ItemHandoff
			for i := range tc.items {
				items = append(items, item(i))
			}
			h := NewHandoff("partial", HandoffDraft{Rule: "each red item's own", Items: items, Next: "do them"})
			data, err := json.Marshal(h)
			require.NoError(t, err)
			assert.LessOrEqual(t, len(data), MaxHandoffBytes)
			assert.Equal(t, len(data), h.Bytes)
			if tc.cutItems {
				require.NotEmpty(t, h.Cut)
				assert.Contains(t, h.Cut[0], "red items shown; details.items has every item's run_id")
				assert.Less(t, len(h.Items), tc.items)
			} else {
				assert.Len(t, h.Items, tc.shown)
			}
			for _, it := range h.Items {
				require.NotNil(t, it.Handoff)
				assert.LessOrEqual(t, it.Handoff.Bytes, MaxHandoffBytes)
			}
		})
	}
}

// TestHandoffBoundIsTheSchemas holds the result schema's bound on a handoff's bytes, and the
// documents', to the one the engine cuts to.
func TestHandoffBoundIsTheSchemas(t *testing.T) {
	data, err := spec.FS.ReadFile("result.schema.json")
	require.NoError(t, err)
	var s struct {
		Defs struct {
			Handoff struct {
				Properties struct {
					Bytes struct {
						Maximum int `json:"maximum"`
					} `json:"bytes"`
				} `json:"properties"`
			} `json:"handoff"`
		} `json:"$defs"`
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	require.NoError(t, json.Unmarshal(data, &s))
	assert.Equal(t, MaxHandoffBytes, s.Defs.Handoff.Properties.Bytes.Maximum)
	assert.Contains(t, s.Properties["handoff"].Description, fmt.Sprintf("at most %d bytes", MaxHandoffBytes))
	// And the documents that say it in words.
	words := fmt.Sprintf("at most %d,%03d bytes", MaxHandoffBytes/1000, MaxHandoffBytes%1000)
	for _, doc := range []string{"../../spec/result.md", "../../docs/modes.md"} {
		data, err := os.ReadFile(doc)
		require.NoError(t, err)
		assert.Contains(t, strings.Join(strings.Fields(string(data)), " "), words, doc)
	}
}
