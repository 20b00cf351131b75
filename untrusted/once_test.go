package untrusted

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type onceDoc struct {
	Event Once[string]  `json:"event"`
	Count Once[float64] `json:"count"`
	Sent  Once[bool]    `json:"sent"`
	Host  Once[struct {
		Kind Once[string] `json:"kind"`
	}] `json:"host"`
	List Once[[2]Once[struct {
		Key Once[string] `json:"key"`
	}]] `json:"list"`
}

func TestUnmarshalFields(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		twice     bool
		check     func(t *testing.T, d onceDoc)
	}{
		{name: "fields read", doc: `{"event":"run_end","count":3,"sent":false,"host":{"kind":"k"},"list":[{"key":"a"},{"key":"b"},{"key":"c"}]}`,
			check: func(t *testing.T, d onceDoc) {
				assert.Equal(t, "run_end", d.Event.V)
				assert.True(t, d.Event.OK)
				assert.Equal(t, 3.0, d.Count.V)
				assert.True(t, d.Sent.Set && d.Sent.OK && !d.Sent.V)
				assert.Equal(t, "k", d.Host.V.Kind.V)
				assert.Equal(t, "a", d.List.V[0].V.Key.V)
				assert.Equal(t, "b", d.List.V[1].V.Key.V, "a fixed array takes its length and passes over the rest")
			}},
		{name: "same key twice", doc: `{"event":"a","event":"b"}`, twice: true},
		{name: "letter case", doc: `{"event":"a","EVENT":"b"}`, twice: true},
		{name: "Kelvin sign", doc: `{"host":{"kind":"a","\u212aind":"b"}}`, twice: true},
		{name: "long s", doc: `{"sent":true,"ſent":false}`, twice: true},
		{name: "nested in an array", doc: `{"list":[{"key":"a","Key":"b"}]}`, twice: true},
		{name: "twice after a value of the wrong kind", doc: `{"count":"x","host":[],"event":1,"event":2}`, twice: true},
		{name: "twice, wrong kind first", doc: `{"host":{"kind":1,"kind":"b"}}`, twice: true},
		{name: "a key not read may repeat: no reading is made of it", doc: `{"event":"a","x":1,"x":2,"y":{"z":1,"z":2}}`,
			check: func(t *testing.T, d onceDoc) { assert.Equal(t, "a", d.Event.V) }},
		{name: "wrong kind", doc: `{"event":5,"count":"3","sent":"yes","host":[1],"list":{"key":"a"}}`,
			check: func(t *testing.T, d onceDoc) {
				assert.True(t, d.Event.Set)
				assert.False(t, d.Event.OK)
				assert.Empty(t, d.Event.V)
				assert.False(t, d.Count.OK)
				assert.False(t, d.Sent.OK)
				assert.False(t, d.Host.OK)
				assert.False(t, d.List.OK)
			}},
		{name: "an element of the wrong kind leaves the others", doc: `{"list":[1,{"key":"b"}]}`,
			check: func(t *testing.T, d onceDoc) {
				assert.False(t, d.List.V[0].OK)
				assert.Equal(t, "b", d.List.V[1].V.Key.V)
			}},
		{name: "null", doc: `{"event":null}`,
			check: func(t *testing.T, d onceDoc) { assert.True(t, d.Event.Set && !d.Event.OK) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d onceDoc
			err := UnmarshalFields([]byte(tc.doc), &d)
			if tc.twice {
				require.ErrorIs(t, err, ErrKeyTwice)
				return
			}
			require.NoError(t, err)
			tc.check(t, d)
		})
	}
	var d onceDoc
	assert.Error(t, UnmarshalFields([]byte(`{"event":`), &d))
	assert.Error(t, UnmarshalFields([]byte(`[1]`), &d), "not an object")
}

// A value the struct does not read costs nothing, whatever its size and shape: the shapes that
// cost a map hundreds of bytes an element (empty objects, one-key objects, nested arrays, keys).
func TestUnmarshalFieldsBuildsOnlyItsFields(t *testing.T) {
	var keys strings.Builder
	keys.WriteString("{")
	for i := range 50000 {
		if i > 0 {
			keys.WriteString(",")
		}
		keys.WriteString(`"k` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `":0`)
	}
	keys.WriteString("}")
	for name, value := range map[string]string{
		"objects":   "[" + strings.Repeat("{},", 200000) + "{}]",
		"one key":   "[" + strings.Repeat(`{"a":0},`, 100000) + "{}]",
		"arrays":    "[" + strings.Repeat("[[[0]]],", 100000) + "0]",
		"many keys": keys.String(),
		"string":    `"` + strings.Repeat("a", 1<<20) + `"`,
	} {
		doc := []byte(`{"event":"run_end","x":` + value + `,"count":1}`)
		allocs := testing.AllocsPerRun(3, func() {
			var d onceDoc
			require.NoError(t, UnmarshalFields(doc, &d))
			require.Equal(t, "run_end", d.Event.V)
		})
		assert.LessOrEqual(t, allocs, 20.0, name)
	}
}

// UnmarshalFields never finds a key twice where CheckKeys finds none, and what it reads of a
// document CheckKeys passes is what a map holds.
func FuzzUnmarshalFields(f *testing.F) {
	for _, s := range []string{`{"event":"a"}`, `{"event":"a","EVENT":"b"}`, `{"host":{"kind":1,"\u212aind":2}}`,
		`{"list":[{"key":"a"},{"key":"b"},{"key":"c","key":"d"}]}`, `{"x":[{},{},[]],"sent":true}`, `{"event":null}`, `[1]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d onceDoc
		err := UnmarshalFields(data, &d)
		var m map[string]any
		if Unmarshal(data, &m) != nil {
			return
		}
		if errors.Is(err, ErrKeyTwice) {
			t.Fatalf("UnmarshalFields found a key twice that CheckKeys did not: %v", err)
		}
		if ev, ok := m["event"].(string); ok && err == nil && d.Event.V != ev {
			t.Fatalf("event %q, a map reads %q", d.Event.V, ev)
		}
	})
}
