package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/engine"
)

// Each mode of the pack contract is registered by a package this binary links: the settings
// schema (spec/pack-settings.schema.json) is generated from those registrations.
func TestContractModesAreRegistered(t *testing.T) {
	for _, mode := range packs.Modes {
		_, ok := engine.LookupMode(mode)
		assert.True(t, ok, "mode %s is registered", mode)
	}
}
