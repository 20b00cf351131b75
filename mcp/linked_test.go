package mcp

// The modes the server serves as tools, as the binary that runs it links them.
import (
	_ "github.com/locumdev/locum/runner/agent"
	_ "github.com/locumdev/locum/runner/dedup"
	_ "github.com/locumdev/locum/runner/handoff"
	_ "github.com/locumdev/locum/runner/summarize"
	_ "github.com/locumdev/locum/runner/transform"
	_ "github.com/locumdev/locum/runner/verifycheck"
)
