package packs

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestFormIsTheTables(t *testing.T) {
	for _, tc := range []struct {
		key  Key
		want Form
	}{
		{Effort, Form{Type: "string", Values: []string{"none", "low", "medium", "high"}}},
		{EditGuard, Form{Type: "string", Values: []string{"span", "signature", "comments"}}},
		{Exact, Form{Type: "string", Values: []string{"auto", "true", "false"}}},
		{MaxAttempts, Form{Type: "integer", Min: 1, Max: 20, Bounded: true}},
		{MaxInputBytes, Form{Type: "integer", Min: 1}},
		{HostTurnsLeft, Form{Type: "integer", Min: 0, Max: 100000, Bounded: true}},
		{Threshold, Form{Type: "number", Min: -1, Max: 1, Bounded: true}},
		{ExpectRed, Form{Type: "boolean"}},
		{Timeout, Form{Type: "string", Duration: true}},
		{FirstTokenTimeout, Form{Type: "string", Duration: true, OrZero: true}},
		{RoleSetting, Form{Type: "string"}},
		{Glob, Form{Type: "string"}},
	} {
		assert.Equal(t, tc.want, FlagSpec{Key: tc.key.String()}.Form(), tc.key.String())
	}
	// Every value a form lists is one the resolver takes.
	for _, s := range keySpecs {
		for _, v := range (FlagSpec{Key: s.key.name}).Form().Values {
			_, err := s.check(v)
			assert.NoError(t, err, "%s: %s", s.key, v)
		}
	}
}
