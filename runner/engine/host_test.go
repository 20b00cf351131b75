package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/cost"
)

// Every family the host_family setting accepts has its prices, and HostParams takes them: the
// settings table (below the runner) and cost.Families are two lists that must name the same.
func TestEveryHostFamilyHasPrices(t *testing.T) {
	c := &packs.Composition{}
	for _, family := range []string{"claude", "gemini", "gpt"} {
		s, err := c.Resolve("", nil, map[string]string{"host-family": family})
		require.NoError(t, err, family)
		want, ok := cost.Families[family]
		require.True(t, ok, "cost.Families has no %s", family)
		assert.Equal(t, want, HostParams(s).Prices, family)
	}
	_, err := c.Resolve("", nil, map[string]string{"host-family": "other"})
	assert.ErrorContains(t, err, "one of claude, gemini, gpt")
	assert.Len(t, cost.Families, 3, "a family priced in cost.Families that the setting refuses")

	s, err := c.Resolve("", nil, map[string]string{"host-family": "gpt", "host-price-out": "12.5", "host-bytes-per-token": "3.5"})
	require.NoError(t, err)
	p := HostParams(s)
	assert.Equal(t, 12.5, p.Prices.Out)
	assert.Equal(t, cost.Families["gpt"].In, p.Prices.In, "an unpriced side keeps the family's price")
	assert.Equal(t, "operator", p.Prices.Source)
	assert.Equal(t, 3.5, p.BytesPerToken)
}
