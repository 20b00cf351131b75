package packs

import (
	"testing"

	"github.com/locumdev/locum/untrusted"
)

// FuzzRunsLocumMCP feeds a repository's .mcp.json, untrusted, to the check init makes of it: it
// must answer or refuse, never panic, and a key given twice is never read as running locum.
func FuzzRunsLocumMCP(f *testing.F) {
	f.Add(string(hostConfig))
	f.Add(`{"mcpServers": {"locum": {"command": "locum", "args": ["mcp"]}, "locum": {"command": "x"}}}`)
	f.Add(`{"mcpServers": {"other": {"command": "o"}}}`)
	f.Add(`[1, {"a": [null, {"b": 2, "b": 3}]}]`)
	f.Add(`{"mcpServers": `)
	f.Fuzz(func(t *testing.T, data string) {
		runs, err := runsLocumMCP([]byte(data))
		if runs && err != nil {
			t.Fatalf("runs and refused at once: %v", err)
		}
		if runs && untrusted.CheckKeys([]byte(data)) != nil {
			t.Fatal("a document with a duplicate key was read as running locum")
		}
	})
}
