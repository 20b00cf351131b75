//go:build unix && !linux

package rails

// birthTime is when the file at path was made; only Linux's statx says it.
func birthTime(string) string { return "" }
