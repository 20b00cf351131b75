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

// MaxDepth is how deeply a JSON document locum trusts may nest arrays and objects. Every
// document locum reads is far shallower; a deeper one is refused before it is decoded, so that
// nesting costs time and memory linear in its size, never more.
const MaxDepth = 64

// DepthError is a JSON document nested deeper than MaxDepth.
type DepthError struct {
	Pointer string // where the limit was passed
}

func (e *DepthError) Error() string {
	return fmt.Sprintf("JSON nested deeper than %d levels at %s; a document locum trusts is never that deep", MaxDepth, e.Pointer)
}

// CheckKeys walks one JSON document and returns a *DuplicateKeyError for the first object that
// names a key twice, or a *DepthError for one nested deeper than MaxDepth. A document that is not
// JSON returns the decoder's error; callers that need line and column decode it themselves first.
// The walk streams: its cost is linear in the document, and a pointer is built only for an error.
func CheckKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := &walker{dec: dec}
	if err := w.value(); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("unexpected data after the JSON value")
	}
	return nil
}

// walker is one pass over a document; path holds the keys and indexes down to the value read.
type walker struct {
	dec  *json.Decoder
	path []string
}

// pointer is the JSON pointer of the current path, RFC 6901.
func (w *walker) pointer() string {
	var b strings.Builder
	for _, seg := range w.path {
		b.WriteByte('/')
		b.WriteString(escapePointer(seg))
	}
	return b.String()
}

func (w *walker) value() error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if len(w.path) >= MaxDepth {
		return &DepthError{Pointer: w.pointer()}
	}
	switch d {
	case '{':
		seen := map[string]string{}
		for w.dec.More() {
			kt, err := w.dec.Token()
			if err != nil {
				return err
			}
			key, _ := kt.(string)
			folded := foldKey(key)
			if prev, dup := seen[folded]; dup {
				return &DuplicateKeyError{Pointer: w.pointer(), Key: key, Other: prev}
			}
			seen[folded] = key
			w.path = append(w.path, key)
			err = w.value()
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	case '[':
		for i := 0; w.dec.More(); i++ {
			w.path = append(w.path, strconv.Itoa(i))
			err := w.value()
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
	}
	_, err = w.dec.Token() // the closing delimiter
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
