package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RunFilter picks the runs `runs list` shows. The zero filter keeps every run.
type RunFilter struct {
	Mode string
	// Since keeps runs that started at or after it; zero keeps all.
	Since time.Time
	// Failed keeps runs that did not end OK, including those with no run_end (a crash).
	Failed bool
}

// Keep says whether s passes the filter.
func (f RunFilter) Keep(s RunSummary) bool {
	if f.Mode != "" && s.Mode != f.Mode {
		return false
	}
	if f.Failed && s.Status == string(StatusOK) {
		return false
	}
	if !f.Since.IsZero() {
		start := s.Start
		if start.IsZero() {
			// A journal whose run_start is lost still has its start in its name.
			if len(s.ID) >= 16 {
				start, _ = time.Parse("20060102T150405Z", s.ID[:16])
			}
		}
		if start.Before(f.Since) {
			return false
		}
	}
	return true
}

// ParseSince reads --since: a duration back from now (90m, 24h, 7d) or a date or time
// (2026-11-30, 2026-11-30T15:00:00Z).
func ParseSince(v string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.AddDate(0, 0, -n), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", v, time.Local); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: want a duration back from now (90m, 24h, 7d), a date (2026-11-30) or a time (2026-11-30T15:00:00Z)", v)
}
