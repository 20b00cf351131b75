package analyze

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Dir analyses every journal in dir the filter admits, newest first, checking each one's seal
// under key. A file that cannot be read, or is no run journal, is counted, not fatal: one broken
// file must not hide the rest.
func Dir(dir string, key []byte, f Filter) (runs []Run, unreadable int, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".jsonl") || e.IsDir() {
			continue
		}
		r, err := AnalyzeFile(filepath.Join(dir, e.Name()), key)
		if err != nil {
			unreadable++
			continue
		}
		if f.Keep(r) {
			r.MeasureHandoff(f.Root)
			runs = append(runs, r)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].ID > runs[j].ID })
	return runs, unreadable, nil
}

// ParseAge reads an age as the operator writes one: 30d, 2w, or a Go duration (36h, 90m).
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			v, err := strconv.ParseUint(s[:n-1], 10, 16)
			if err != nil {
				return 0, fmt.Errorf("%q is not an age: want a whole number of days or weeks (30d, 2w) or a duration (36h)", s)
			}
			return time.Duration(v) * u, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age: want 30d, 2w or a duration such as 36h", s)
	}
	return d, nil
}

// ParseSince reads --since: an age back from now (7d) or a date (2026-11-01, UTC).
func ParseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse("2006-01-02", strings.TrimSpace(s)); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(s)); err == nil {
		return t, nil
	}
	d, err := ParseAge(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither an age (7d, 36h) nor a date (2026-11-01)", s)
	}
	return now.Add(-d), nil
}

// ParseSize reads a size in bytes with an optional unit: 500KB, 100MB, 1GB (powers of 1024,
// also written KiB, MiB, GiB).
func ParseSize(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"KB", 1 << 10}, {"MB", 1 << 20}, {"GB", 1 << 30}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.m
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)/mult {
		return 0, fmt.Errorf("%q is not a size: want a positive number of bytes, or with KB, MB or GB", s)
	}
	return n * mult, nil
}
