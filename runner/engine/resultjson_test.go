package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type listed struct {
	Score float64 `json:"score"`
	A     string  `json:"a"`
}

// WriteJSON writes what json.Marshal writes, byte for byte, whatever the details hold.
func TestWriteJSONMatchesMarshal(t *testing.T) {
	model := "m"
	for name, details := range map[string]map[string]any{
		"none":    nil,
		"empty":   {},
		"scalars": {"files": 3, "dir": "a<b>&c", "threshold": 0.8},
		"lists": {"pairs": []listed{{0.9, "x.md"}, {0.8, "y\u2028.md"}}, "empty": []listed{}, "nil": []listed(nil),
			"bytes": []byte("raw"), "nested": map[string]any{"z": 1, "a": []int{1, 2}}, "anys": []any{1, "two", nil}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &Result{Status: StatusOK, Mode: "dedup", RunID: "r1", Model: &model, Spend: "$0.00", Details: details}
			want, err := json.Marshal(r)
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, r.WriteJSON(&got))
			assert.Equal(t, string(want)+"\n", got.String())
		})
	}
}
