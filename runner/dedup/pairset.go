package dedup

import (
	"container/heap"
	"math"
)

// ranksBefore is the order pairs are printed in: highest score first (as printed, to three
// decimals), ties by file names.
func ranksBefore(a, b Pair) bool {
	sa, sb := math.Round(a.Score*1000), math.Round(b.Score*1000)
	if sa != sb {
		return sa > sb
	}
	if a.A != b.A {
		return a.A < b.A
	}
	return a.B < b.B
}

// pairSet gathers the pairs a screen finds: every one, or with a limit only the limit highest
// ranked, so that a screen asked for its top pairs holds those and a count, however many pairs
// pass the threshold (two million at --threshold 0 over 2,000 files).
type pairSet struct {
	limit int // 0 keeps every pair
	// pairs, with a limit, is a heap whose root is the lowest ranked pair kept.
	pairs lowestFirst
	total int
}

func (s *pairSet) add(p Pair) {
	s.total++
	switch {
	case s.limit <= 0:
		s.pairs = append(s.pairs, p)
	case len(s.pairs) < s.limit:
		heap.Push(&s.pairs, p)
	case ranksBefore(p, s.pairs[0]):
		s.pairs[0] = p
		heap.Fix(&s.pairs, 0)
	}
}

// merge adds what another set kept and counts what it dropped: the top pairs of a union are
// among the top pairs of its parts.
func (s *pairSet) merge(o *pairSet) {
	for _, p := range o.pairs {
		s.add(p)
	}
	s.total += o.total - len(o.pairs)
}

// sorted returns the kept pairs in printing order; the set is spent.
func (s *pairSet) sorted() []Pair {
	out := []Pair(s.pairs)
	SortPairs(out)
	s.pairs = nil
	return out
}

// lowestFirst is a heap of pairs with the lowest ranked at its root.
type lowestFirst []Pair

func (h lowestFirst) Len() int           { return len(h) }
func (h lowestFirst) Less(i, j int) bool { return ranksBefore(h[j], h[i]) }
func (h lowestFirst) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *lowestFirst) Push(x any)        { *h = append(*h, x.(Pair)) }
func (h *lowestFirst) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}
