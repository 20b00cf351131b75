package client

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/locumdev/locum/rails"
)

// FuzzDecodeChat feeds untrusted server bodies to the chat decoder: every body gets a class, and
// only an answer carries text.
func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(`{"choices":[{"finish_reason":"stop","message":{"content":"ok"}}],"usage":{"prompt_tokens":1,"completion_tokens":2}}`))
	f.Add([]byte(`{"choices":[{"finish_reason":"length","message":{"content":"","reasoning":"x"}}],"usage":{"prompt_tokens":NaN}}`))
	f.Add([]byte(`{"choices":[]}`))
	f.Add([]byte(`<html>`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		res := decodeChat(raw)
		if res.Class == "" {
			t.Fatal("no class")
		}
		if res.Class == rails.ClassAnswer && strings.TrimSpace(res.Answer) == "" {
			t.Fatal("an empty answer classified as an answer")
		}
		if res.Usage.In != nil && *res.Usage.In < 0 {
			t.Fatal("a negative token count")
		}
	})
}

// FuzzRepairNonFinite feeds untrusted bodies to the NaN repair: it never changes a body that is
// already JSON, and what it changes outside strings is only a value turned null.
func FuzzRepairNonFinite(f *testing.F) {
	f.Add([]byte(`{"a":NaN,"s":"b: Infinity"}`))
	f.Add([]byte(`{"a":[1,-Infinity],"s":"\\\": NaN"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		fixed, changed := repairNonFinite(raw)
		if json.Valid(raw) && changed {
			t.Fatalf("changed valid JSON %q to %q", raw, fixed)
		}
		if !changed && !bytes.Equal(raw, fixed) {
			t.Fatalf("reported no change but changed %q to %q", raw, fixed)
		}
	})
}

// FuzzDecodeEmbeddings feeds untrusted embedding responses: an accepted one is one finite vector
// of one length per input.
func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[0,1]},{"index":0,"embedding":[1,0]}]}`), 2)
	f.Add([]byte(`{"data":[{"index":0,"embedding":[NaN]}]}`), 1)
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		res, err := DecodeEmbeddings(raw, n)
		if err != nil {
			return
		}
		for i, v := range res.Vectors {
			if v == nil || len(v) != len(res.Vectors[0]) {
				t.Fatalf("vector %d missing or of another length", i)
			}
		}
	})
}
