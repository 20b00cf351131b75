package packs

import (
	"path/filepath"
	"strings"
)

// TranscriptsFolder is the host_transcripts setting as a path: a leading ~/ is the home
// directory (env's HOME), a relative path is taken from the working directory; "" when unset,
// which reads nothing.
func TranscriptsFolder(s *Settings, env Lookup) string {
	dir := s.String(HostTranscripts)
	if dir == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(dir, "~/"); ok && env != nil {
		if home, ok := env("HOME"); ok && home != "" {
			dir = filepath.Join(home, rest)
		}
	}
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return dir
}
