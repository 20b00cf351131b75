package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
)

// receiptLine is a receipt as the documents show one, indented as a code block.
var receiptLine = regexp.MustCompile(`^\s+((OK|RED|REFUSED|ERROR) mode=.*)$`)

// receiptValue is what each field of a printed receipt may hold; a document that shows a field
// the receipt does not print, or a value it never prints, fails.
var receiptValue = map[string]*regexp.Regexp{
	"mode":            regexp.MustCompile(`^[a-z][a-z-]*$`),
	"model":           regexp.MustCompile(`^\S+$`),
	"routing":         regexp.MustCompile(`^(operator|earned)$`),
	"attempts":        regexp.MustCompile(`^[0-9]+$`),
	"requests":        regexp.MustCompile(`^[0-9]+$`),
	"in":              regexp.MustCompile(`^([0-9]+t|\?)$`),
	"out":             regexp.MustCompile(`^([0-9]+t|\?)$`),
	"time":            regexp.MustCompile(`^[0-9]+ms$`),
	"saved":           regexp.MustCompile(`^[+-]\$[0-9]+\.[0-9]{4}\((est|measured)\)$`),
	"baseline":        regexp.MustCompile(`^(red|green|skipped)$`),
	"sandbox":         regexp.MustCompile(`^(bwrap|none)$`),
	"verify_strength": regexp.MustCompile(`^([0-9]+/[0-9]+|\?)$`),
	"run":             regexp.MustCompile(`^([0-9]{8}T[0-9]{6}Z-[0-9a-f]{6}|\.\.\.)$`),
}

// printedReceipt is the receipt locum prints for a run of the mode with every field it can
// carry: the order the documents' receipts must keep.
func printedReceipt(mode string) string {
	s := func(v string) *string { return &v }
	n := func(v int64) *int64 { return &v }
	rate := 30.0
	r := &engine.Result{
		Status: engine.StatusOK, Mode: mode, Model: s("m"), Routing: s("operator"), Attempts: 1,
		In: n(10), Out: n(5), TTFTms: n(3), TimeMs: 9, Rate: &rate, Spend: "$0.00",
		HostSaved: &cost.Summary{Method: cost.MethodEstimated, USD: 0.01},
		Baseline:  s("red"), Sandbox: s("bwrap"), VerifyStrength: s("4/4"),
		RunID: "20261204T201530Z-5c1f0e", Journal: s("j"),
	}
	return r.ShortReceipt()
}

func fieldsOf(receipt string) (status string, keys, values []string) {
	words := strings.Fields(receipt)
	for _, w := range words[1:] {
		if w == "..." {
			continue
		}
		k, v, _ := strings.Cut(w, "=")
		keys = append(keys, k)
		values = append(values, v)
	}
	return words[0], keys, values
}

// TestDocumentedReceiptsArePrinted holds every receipt the README and docs/ show to the one
// shape locum prints for every outcome: its fields in the printed order (a document may leave
// some out, or elide them with ...), each value one the receipt can hold, and none of the
// fields only the journal's full receipt has.
func TestDocumentedReceiptsArePrinted(t *testing.T) {
	seen := 0
	for _, path := range userDocs(t) {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		for i, line := range strings.Split(string(data), "\n") {
			m := receiptLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			seen++
			where := filepath.Base(path) + ":" + strconv.Itoa(i+1)
			_, keys, values := fieldsOf(m[1])
			require.NotEmpty(t, keys, where)
			_, order, _ := fieldsOf(printedReceipt(values[0]))
			at := 0
			for j, k := range keys {
				pattern, known := receiptValue[k]
				if !assert.True(t, known, "%s: the receipt prints no field %q", where, k) {
					continue
				}
				if values[j] != "..." {
					assert.Regexp(t, pattern, values[j], "%s: %s=", where, k)
				}
				next := indexFrom(order, k, at)
				assert.GreaterOrEqual(t, next, 0, "%s: %s is out of the printed order %v", where, k, order)
				if next >= 0 {
					at = next + 1
				}
			}
		}
	}
	assert.Greater(t, seen, 2, "the documents show receipts")
}

func indexFrom(list []string, v string, from int) int {
	for i := from; i < len(list); i++ {
		if list[i] == v {
			return i
		}
	}
	return -1
}
