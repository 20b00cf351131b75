package analyze

// The journals read here are the modes' own: their registrations say which edit in place.
import (
	_ "github.com/locumdev/locum/runner/agent"
	_ "github.com/locumdev/locum/runner/dedup"
	_ "github.com/locumdev/locum/runner/summarize"
	_ "github.com/locumdev/locum/runner/transform"
)
