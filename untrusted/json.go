package untrusted

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DuplicateKeyError is a JSON object that names a key twice, or two keys that differ only in
// letter case (encoding/json matches struct fields without regard to case, so either would do).
type DuplicateKeyError struct {
	Pointer string // the object's JSON pointer, RFC 6901
	Key     string
	Other   string // the earlier spelling, when it differs in case
}

func (e *DuplicateKeyError) Error() string {
	if e.Other != "" && e.Other != e.Key {
		return fmt.Sprintf("keys %q and %q differ only in letter case; a JSON object locum trusts names each key once", e.Other, e.Key)
	}
	return fmt.Sprintf("duplicate key %q; a JSON object locum trusts names each key once", e.Key)
}

// At is the pointer of the duplicate key itself.
func (e *DuplicateKeyError) At() string { return e.Pointer + "/" + escapePointer(e.Key) }

// CheckKeys walks one JSON document and returns a *DuplicateKeyError for the first object that
// names a key twice. A document that is not JSON returns the decoder's error; callers that need
// line and column decode it themselves first.
func CheckKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := walk(dec, ""); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

func walk(dec *json.Decoder, ptr string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			folded := foldKey(key)
			if prev, dup := seen[folded]; dup {
				return &DuplicateKeyError{Pointer: ptr, Key: key, Other: prev}
			}
			seen[folded] = key
			if err := walk(dec, ptr+"/"+escapePointer(key)); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if err := walk(dec, ptr+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

func escapePointer(s string) string {
	// Nearly every key needs no escape; a replacer built per key was most of a journal's read.
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// Unmarshal decodes data into v after CheckKeys, so the value a caller uses is the only value
// the document can be read as.
func Unmarshal(data []byte, v any) error {
	if err := CheckKeys(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// foldKey folds a key as encoding/json does when it matches a key to a struct field: ASCII
// letters to upper case, any other rune to the upper case of its lower case. Folding with
// strings.ToLower alone let "ſize" (long s) and "size", or "\u212aey" (Kelvin sign) and "key",
// through as two keys that encoding/json reads as one.
func foldKey(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for _, r := range key {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		b.WriteRune(unicode.ToUpper(unicode.ToLower(r)))
	}
	return b.String()
}
