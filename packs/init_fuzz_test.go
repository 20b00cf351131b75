package packs

import (
	"encoding/json"
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

// FuzzWithLocumServer: a host config init merges into runs locum mcp afterwards, keeps every other
// server it had, and is never made from a document with a key named twice.
func FuzzWithLocumServer(f *testing.F) {
	f.Add(`{"mcpServers": {"other": {"command": "o"}}}`)
	f.Add(`{"theme": "dark", "mcpServers": {"locum": {"command": "node"}, "x": {}}}`)
	f.Add(`{}`)
	f.Add(`{"mcpServers": []}`)
	f.Add(`{"mcpServers": {"a": 1, "a": 2}}`)
	f.Fuzz(func(t *testing.T, data string) {
		out, _, _, err := withLocumServer([]byte(data))
		if err != nil {
			return
		}
		if untrusted.CheckKeys([]byte(data)) != nil {
			t.Fatal("merged a document with a duplicate key")
		}
		runs, err := runsLocumMCP(out)
		if err != nil || !runs {
			t.Fatalf("the merged config does not run locum mcp (%v):\n%s", err, out)
		}
		var before, after struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		_ = json.Unmarshal([]byte(data), &before)
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatal(err)
		}
		for name := range before.MCPServers {
			if _, ok := after.MCPServers[name]; !ok {
				t.Fatalf("server %q was dropped", name)
			}
		}
	})
}
