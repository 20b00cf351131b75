package dedup

import (
	"cmp"
	"math"
	"slices"
)

const (
	// ContainedAt is the least share of an entry's shingles that must lie in another for it to
	// count as inside it: a note pasted into a longer one scores low on Jaccard (its shingles are
	// a fraction of the union) but close to 1 on this share. A pair is scored this way only where
	// its Jaccard falls below the threshold, and never at a share below the threshold.
	ContainedAt = 0.9
	// MinContainedShingles is the fewest shingles an entry needs to count as inside another, so a
	// one-line note that repeats a common phrase is not inside every file that has it.
	MinContainedShingles = 16
	// containedCandidate is the Jaccard at which candidates are still found with probability at
	// least 0.999 whatever the threshold: an entry inside one at most three times its size.
	containedCandidate = 1.0 / 3
)

// Overlap counts the hashes two sorted sets share.
func Overlap(a, b []uint64) int {
	n := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}

// LexicalScore scores two shingle sets at threshold: their Jaccard similarity; or, where that is
// below the threshold and the smaller set (of at least MinContainedShingles) lies at least
// max(threshold, ContainedAt) inside the larger, that share, with inside 1 when a is the one
// inside and 2 when b is. An empty set scores 0 against everything.
func LexicalScore(a, b []uint64, threshold float64) (score float64, inside int) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0
	}
	shared := Overlap(a, b)
	jaccard := float64(shared) / float64(len(a)+len(b)-shared)
	if atLeast(jaccard, threshold) {
		return jaccard, 0
	}
	small, which := len(a), 1
	if len(b) < small {
		small, which = len(b), 2
	}
	if small < MinContainedShingles {
		return jaccard, 0
	}
	if share := float64(shared) / float64(small); share >= ContainedAt && atLeast(share, threshold) {
		return share, which
	}
	return jaccard, 0
}

// LexicalPairs lists the pairs whose lexical score (LexicalScore) is at or above threshold,
// highest first, ties in name order.
func LexicalPairs(entries []Lexical, names []string, threshold float64) []Pair {
	set := &pairSet{}
	lexicalPairs(entries, names, threshold, set)
	return set.sorted()
}

// lexicalPairs adds the pairs LexicalPairs finds to set. Candidates are the pairs whose
// signatures agree on every row of at least one band, with rows per band chosen so that a pair
// at the threshold, or at a Jaccard of one third (an entry inside another three times its size),
// is a candidate with probability at least 0.999; each candidate is scored exactly once, in the
// first band it collides in, so no set of the pairs seen is kept. Bands go to one worker per core.
func lexicalPairs(entries []Lexical, names []string, threshold float64, set *pairSet) {
	score := func(out *pairSet, i, j int) {
		s, inside := LexicalScore(entries[i].Set, entries[j].Set, threshold)
		if !atLeast(s, threshold) {
			return
		}
		p := Pair{Score: round4(s), A: names[i], B: names[j], i: i, j: j}
		switch inside {
		case 1:
			p.Inside = names[i]
		case 2:
			p.Inside = names[j]
		}
		out.add(p)
	}
	rows := 0
	if threshold > 0 {
		rows = bandRows(min(threshold, containedCandidate))
	}
	if rows == 0 {
		out := set.child()
		for i := range entries {
			for j := i + 1; j < len(entries); j++ {
				score(out, i, j)
			}
		}
		set.merge(out)
		return
	}
	bands := SignatureSize / rows
	set.inWorkers(min(bands, parallelism()), func(out *pairSet, w, workers int) {
		keys := make([]bandKey, 0, len(entries))
		for band := w; band < bands; band += workers {
			keys = bandKeys(entries, band, rows, keys[:0])
			for start := 0; start < len(keys); {
				end := start + 1
				for end < len(keys) && keys[end].hash == keys[start].hash {
					end++
				}
				for x := start; x < end; x++ {
					for y := x + 1; y < end; y++ {
						i, j := int(keys[x].entry), int(keys[y].entry)
						if i > j {
							i, j = j, i
						}
						// A pair whose band values only hash alike is not a candidate, and one
						// that collided in an earlier band was scored there.
						if !sameRows(entries[i].Sig, entries[j].Sig, band*rows, (band+1)*rows) || collidedBefore(entries[i].Sig, entries[j].Sig, band, rows) {
							continue
						}
						score(out, i, j)
					}
				}
				start = end
			}
		}
	})
}

// bandKey is one entry's hash of one band of its signature.
type bandKey struct {
	hash  uint64
	entry int32
}

// bandKeys lists the band's hash for every entry with words, sorted by hash then entry.
func bandKeys(entries []Lexical, band, rows int, out []bandKey) []bandKey {
	for i, e := range entries {
		if e.Sig == nil {
			continue
		}
		h := uint64(band) + 1
		for _, v := range e.Sig[band*rows : (band+1)*rows] {
			h = mix64(h ^ uint64(v))
		}
		out = append(out, bandKey{hash: h, entry: int32(i)})
	}
	sortBandKeys(out)
	return out
}

func sameRows(a, b Signature, from, to int) bool {
	for k := from; k < to; k++ {
		if a[k] != b[k] {
			return false
		}
	}
	return true
}

func collidedBefore(a, b Signature, band, rows int) bool {
	for k := range band {
		if sameRows(a, b, k*rows, (k+1)*rows) {
			return true
		}
	}
	return false
}

// round4 is a score as printed, to four decimals: float32 noise (0.9999999403953552 for an
// exact copy) is not a figure anyone reads.
func round4(s float64) float64 { return math.Round(s*1e4) / 1e4 }

func sortBandKeys(keys []bandKey) {
	slices.SortFunc(keys, func(a, b bandKey) int {
		if c := cmp.Compare(a.hash, b.hash); c != 0 {
			return c
		}
		return cmp.Compare(a.entry, b.entry)
	})
}
