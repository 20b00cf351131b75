package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunFilter(t *testing.T) {
	at := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	ok := RunSummary{ID: "20261130T150000Z-aaaaaa", Start: at, Mode: "transform", Status: "OK"}
	red := RunSummary{ID: "20261129T150000Z-bbbbbb", Start: at.AddDate(0, 0, -1), Mode: "summarize", Status: "RED"}
	crashed := RunSummary{ID: "20261130T160000Z-cccccc", Mode: "", Status: "running?"}
	tests := []struct {
		name string
		f    RunFilter
		want []bool
	}{
		{"zero keeps all", RunFilter{}, []bool{true, true, true}},
		{"mode", RunFilter{Mode: "transform"}, []bool{true, false, false}},
		{"failed keeps all but OK", RunFilter{Failed: true}, []bool{false, true, true}},
		{"since reads the id when run_start is lost", RunFilter{Since: at}, []bool{true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, []bool{tt.f.Keep(ok), tt.f.Keep(red), tt.f.Keep(crashed)})
		})
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
		"2026-11-30T10:00:00Z": time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
	} {
		got, err := ParseSince(in, now)
		require.NoError(t, err, in)
		assert.True(t, want.Equal(got), in)
	}
	for _, bad := range []string{"", "yesterday", "-5d", "-1h", "7 d"} {
		_, err := ParseSince(bad, now)
		assert.Error(t, err, bad)
	}
}
