package main

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/spec"
)

// Each mode of the pack contract is registered by the package this binary links, and takes the
// settings the contract's schema lists for it: those its registration names, beyond the ones
// every run resolves from the endpoint.
func TestContractModesTakeTheSchemasSettings(t *testing.T) {
	data, err := spec.FS.ReadFile("pack.schema.json")
	require.NoError(t, err)
	var doc struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(data, &doc))
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	require.NoError(t, err)
	c := &packs.Composition{Packs: []*packs.Pack{p}}
	shared, err := c.Resolve("", nil, nil)
	require.NoError(t, err)
	global := map[string]bool{}
	for _, s := range shared.All() {
		global[s.Key] = true
	}
	assert.ElementsMatch(t, packs.Modes, slices.Collect(maps.Keys(doc.Defs["modes"].Properties)))
	for _, mode := range packs.Modes {
		_, ok := engine.LookupMode(mode)
		require.True(t, ok, "mode %s is registered", mode)
		s, err := c.Resolve(mode, nil, nil)
		require.NoError(t, err)
		var keys []string
		for _, set := range s.All() {
			if !global[set.Key] {
				keys = append(keys, set.Key)
			}
		}
		assert.ElementsMatch(t, slices.Collect(maps.Keys(doc.Defs[mode].Properties)), keys, "$defs/%s", mode)
	}
}
