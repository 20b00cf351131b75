package untrusted

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrKeyTwice is a JSON object that gives a value read through Once twice: the same key named
// again, or another spelling that encoding/json matches to the same field (letter case, the
// Kelvin sign for k, the long s for s).
var ErrKeyTwice = errors.New("a key is named twice, in some letter case; a JSON object locum reads names each key once")

// Once is one field of a struct that UnmarshalFields fills: the value of its key, which the
// object may give only once. Every spelling encoding/json matches to the field reaches the same
// Once, so a second one is refused however it is spelt, and the value read is the only one the
// object can be read as.
//
// A value of another JSON kind than T, or null, leaves V zero and OK false, as a map's reader
// that asks for a T finds none; the rest of the document is still read.
type Once[T any] struct {
	V T
	// Set says the object gave the key; OK that its value was a T.
	Set, OK bool
}

// UnmarshalJSON reads the field's value, refusing a second one.
func (o *Once[T]) UnmarshalJSON(data []byte) error {
	if o.Set {
		return ErrKeyTwice
	}
	o.Set = true
	if bytes.Equal(data, []byte("null")) {
		return nil
	}
	err := json.Unmarshal(data, &o.V)
	var kind *json.UnmarshalTypeError
	if errors.As(err, &kind) {
		// Only a value of the wrong kind for T itself gets here: each field of a struct T is a
		// Once of its own, which keeps its own kind errors.
		var zero T
		o.V = zero
		return nil
	}
	o.OK = err == nil
	return err
}

// UnmarshalFields decodes the JSON object data into v, a pointer to a struct whose every field
// is a Once (a struct of Once fields, or an array of them, inside one): a key read twice is
// ErrKeyTwice, and a value of the wrong kind is left unset.
//
// Only what v holds is built. encoding/json checks the whole document's syntax and passes over
// the value of every key v does not name without allocating, so a line of any size and shape
// costs the fields v reads and no more; Unmarshal into a map, and CheckKeys, cost memory and time
// with every value and key of the document. A fixed-size array in v takes that many elements of
// a JSON array and passes over the rest. What v does not read is not checked for keys named
// twice, since no reading of it is made.
func UnmarshalFields(data []byte, v any) error {
	return json.Unmarshal(data, v)
}
