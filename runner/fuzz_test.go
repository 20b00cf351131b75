package runner

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

// FuzzParseDigest feeds untrusted model replies to the digest parser and the gate: the gate's
// verdicts stay its own.
func FuzzParseDigest(f *testing.F) {
	f.Add(`{"digest":[{"text":"t","lines":[1,2],"quote":"a b","verdict":"supported"}]}`)
	f.Add("```json\n{\"digest\":[]}\n```")
	f.Fuzz(func(t *testing.T, reply string) {
		claims, err := ParseDigest(reply)
		if err != nil {
			return
		}
		file := []string{"a b", "c"}
		for _, c := range Gate(claims, file, LineRange{Start: 1, End: 2}) {
			if c.Supported() && (c.Lines[0] < 1 || c.Lines[1] > 2 || c.Lines[0] > c.Lines[1]) {
				t.Fatalf("a claim outside the span was supported: %+v", c)
			}
		}
	})
}

// FuzzMinHash feeds arbitrary file text to the shingler: it never panics, a text scores 1 with
// itself unless it has no words, and letter case never changes a signature.
func FuzzMinHash(f *testing.F) {
	f.Add("The quick, brown fox!")
	f.Add("Grüße aus Köln \xff\xfe")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		sig := MinHash(text)
		if sig == nil {
			return
		}
		if EstimatedJaccard(sig, sig) != 1 {
			t.Fatal("a text does not match itself")
		}
		if strings.ToValidUTF8(text, "") == text && EstimatedJaccard(sig, MinHash(strings.ToUpper(text))) != 1 && strings.EqualFold(strings.ToUpper(text), text) {
			t.Fatalf("upper case changed the signature of %q", text)
		}
	})
}
