package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFieldSeal(t *testing.T) {
	s := FieldSeal{Key: []byte("0123456789abcdef0123456789abcdef"), Version: "v1"}
	mac := s.MAC("a", 1, map[string]string{"k": "v"})
	assert.Len(t, mac, 64)
	assert.True(t, s.OK(mac, "a", 1, map[string]string{"k": "v"}))
	for name, other := range map[string]struct {
		seal   FieldSeal
		fields []any
	}{
		"another field":   {s, []any{"a", 2, map[string]string{"k": "v"}}},
		"fields shifted":  {s, []any{"a1", map[string]string{"k": "v"}}},
		"another version": {FieldSeal{Key: s.Key, Version: "v2"}, []any{"a", 1, map[string]string{"k": "v"}}},
		"another key":     {FieldSeal{Key: []byte("another key of the same length!!"), Version: "v1"}, []any{"a", 1, map[string]string{"k": "v"}}},
	} {
		assert.False(t, other.seal.OK(mac, other.fields...), name)
	}
	assert.Empty(t, FieldSeal{Version: "v1"}.MAC("a"), "no key seals nothing")
	assert.False(t, FieldSeal{Version: "v1"}.OK("", "a"), "no key holds no seal, not even an empty one")
}
