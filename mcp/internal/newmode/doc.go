// Package newmode is test-only: its test registers a mode of its own, in a test binary of its
// own so that no other test's tool list holds it, and shows that locum mcp serves it as a tool
// and a workflow runs it as a step with nothing but the mode's package and its registration.
package newmode
