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

// screened are details with a list that may be long, as a screen's are.
type screened struct {
	Pairs []listed `json:"pairs,omitzero"`
	Dir   string   `json:"dir"`
	Files int      `json:"files"`
}

// WriteJSON writes what encoding/json writes of the result, byte for byte, with the details'
// keys sorted as it sorts a map's, whatever the details hold; MarshalJSON writes the same.
func TestWriteJSONMatchesMarshal(t *testing.T) {
	model := "m"
	for name, details := range map[string]any{
		"none":    nil,
		"zero":    &screened{},
		"scalars": &screened{Files: 3, Dir: "a<b>&c"},
		"lists":   &screened{Pairs: []listed{{0.9, "x.md"}, {0.8, "y\u2028.md"}}, Dir: "notes"},
		"empty":   &screened{Pairs: []listed{}},
	} {
		t.Run(name, func(t *testing.T) {
			r := &Result{Status: StatusOK, Mode: "dedup", RunID: "r1", Model: &model, Spend: "$0.00", Details: details}
			head := resultFields(*r)
			head.Details = sortedByEncodingJSON(t, details)
			want, err := json.Marshal(&head)
			require.NoError(t, err)
			var got bytes.Buffer
			require.NoError(t, r.WriteJSON(&got))
			assert.Equal(t, string(want)+"\n", got.String())
			marshaled, err := json.Marshal(r)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(marshaled))
		})
	}
}
