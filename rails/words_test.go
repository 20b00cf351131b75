package rails

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWords(t *testing.T) {
	arg := func(s string) string { return "`" + s + "`" }
	tests := []struct {
		name, format string
		args         []any
		flag, tool   string
	}{
		{"one setting", "raise {max_input_bytes}", nil, "raise --max-input-bytes", "raise `max_input_bytes`"},
		{"two settings", "{lines} and {symbol} both name the span", nil, "--lines and --symbol both name the span", "`lines` and `symbol` both name the span"},
		{"a value is never filled", "{lines} %q is inverted", []any{"{symbol}"}, `--lines "{symbol}" is inverted`, "`lines` \"{symbol}\" is inverted"},
		{"braces that are no setting", "a {A,B} glob, {} and {9x}", nil, "a {A,B} glob, {} and {9x}", "a {A,B} glob, {} and {9x}"},
		{"no setting", "plain %d", []any{7}, "plain 7", "plain 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := Textf(tt.format, tt.args...)
			assert.Equal(t, tt.flag, w.Error())
			assert.Equal(t, tt.tool, w.Words(arg))
		})
	}
}
