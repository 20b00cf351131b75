package dedup

import (
	"container/heap"
	"math"
	"sync"
)

// ranksBefore is the order pairs are printed in: highest score first (as printed, to four
// decimals), ties by file names.
func ranksBefore(a, b Pair) bool {
	sa, sb := math.Round(a.Score*1e4), math.Round(b.Score*1e4)
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
// pass the threshold (two million at --threshold 0 over 2,000 files). With a grouper, every pair
// also joins its two entries' groups, which costs memory in the entries, not in the pairs.
type pairSet struct {
	limit int // 0 keeps every pair
	// pairs, with a limit, is a heap whose root is the lowest ranked pair kept.
	pairs lowestFirst
	total int
	group *grouper
	// links are pairs not yet handed to the grouper, so workers take its lock once a batch.
	links []Pair
	// record, when set, keeps every pair by index for the screen a re-run reuses, up to
	// maxScreenPairs; past that, recorded is nil and overflow true.
	record   bool
	recorded []ScreenPair
	overflow bool
}

// linkBatch is how many pairs a worker's set holds before it hands them to the grouper.
const linkBatch = 4096

// child is an empty set with s's limit and grouper, for one worker; merge it back into s.
func (s *pairSet) child() *pairSet { return &pairSet{limit: s.limit, group: s.group, record: s.record} }

// inWorkers runs fn on up to workers goroutines (at least one), each given a child of s, its
// number w and the count of workers, so it can take its share of the items; then it merges what
// they found into s.
func (s *pairSet) inWorkers(workers int, fn func(out *pairSet, w, workers int)) {
	workers = max(1, workers)
	found := make([]*pairSet, workers)
	var wg sync.WaitGroup
	for w := range workers {
		found[w] = s.child()
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(found[w], w, workers)
		}()
	}
	wg.Wait()
	for _, f := range found {
		s.merge(f)
	}
}

func (s *pairSet) add(p Pair) {
	s.total++
	if s.record && !s.overflow {
		s.recorded = append(s.recorded, ScreenPair{I: uint32(p.i), J: uint32(p.j), Score: p.Score})
		if len(s.recorded) > maxScreenPairs {
			s.overflow, s.recorded = true, nil
		}
	}
	if s.group != nil {
		s.links = append(s.links, p)
		if len(s.links) >= linkBatch {
			s.flush()
		}
	}
	switch {
	case s.limit == 0:
		s.pairs = append(s.pairs, p)
	case len(s.pairs) < s.limit:
		heap.Push(&s.pairs, p)
	case ranksBefore(p, s.pairs[0]):
		s.pairs[0] = p
		heap.Fix(&s.pairs, 0)
	}
}

func (s *pairSet) flush() {
	if len(s.links) > 0 {
		s.group.link(s.links)
		s.links = s.links[:0]
	}
}

// merge adds what another set kept and counts what it dropped: the top pairs of a union are
// among the top pairs of its parts. The other set's links are handed to the grouper, not again.
func (s *pairSet) merge(o *pairSet) {
	if o.group != nil {
		o.flush()
	}
	group, record := s.group, s.record
	s.group, s.record = nil, false
	for _, p := range o.pairs {
		s.add(p)
	}
	s.group, s.record = group, record
	s.total += o.total - len(o.pairs)
	if record && !s.overflow {
		if s.overflow = o.overflow || len(s.recorded)+len(o.recorded) > maxScreenPairs; s.overflow {
			s.recorded = nil
		} else {
			s.recorded = append(s.recorded, o.recorded...)
		}
	}
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

// grouper joins entries linked by a pair into groups (the connected components of the pairs at
// the threshold), by union-find, keeping for each group its count of pairs and its lowest-ranked
// pair.
type grouper struct {
	mu      sync.Mutex
	parent  []int32
	pairs   []int32
	weakest []Pair
}

func newGrouper(entries int) *grouper {
	g := &grouper{parent: make([]int32, entries), pairs: make([]int32, entries), weakest: make([]Pair, entries)}
	for i := range g.parent {
		g.parent[i] = int32(i)
	}
	return g
}

func (g *grouper) find(i int32) int32 {
	for g.parent[i] != i {
		g.parent[i] = g.parent[g.parent[i]]
		i = g.parent[i]
	}
	return i
}

func (g *grouper) link(ps []Pair) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, p := range ps {
		a, b := g.find(int32(p.i)), g.find(int32(p.j))
		if a != b {
			if b < a {
				a, b = b, a
			}
			g.parent[b] = a
			g.pairs[a] += g.pairs[b]
			if g.pairs[b] > 0 && (g.pairs[a] == g.pairs[b] || ranksBefore(g.weakest[a], g.weakest[b])) {
				g.weakest[a] = g.weakest[b]
			}
		}
		if g.pairs[a] == 0 || ranksBefore(g.weakest[a], p) {
			g.weakest[a] = p
		}
		g.pairs[a]++
	}
}

// Group is entries joined by pairs at or above the threshold, directly or through others.
type Group struct {
	// Files are the members, in name order.
	Files []string `json:"files"`
	// Pairs counts the pairs at or above the threshold among them.
	Pairs int `json:"pairs"`
	// Weakest is the lowest-scoring of those pairs: how alike the least alike two linked
	// members are.
	Weakest Pair `json:"weakest"`
}

// groups lists the groups of two or more entries, the largest first, then by their first
// member's name.
func (g *grouper) groups(names []string) []Group {
	members := map[int32][]string{}
	var roots []int32
	for i := range g.parent {
		r := g.find(int32(i))
		if g.pairs[r] == 0 {
			continue
		}
		if members[r] == nil {
			roots = append(roots, r)
		}
		members[r] = append(members[r], names[i])
	}
	out := make([]Group, 0, len(roots))
	for _, r := range roots {
		// names are in name order and roots in the order of their first member.
		out = append(out, Group{Files: members[r], Pairs: int(g.pairs[r]), Weakest: g.weakest[r]})
	}
	sortGroups(out)
	return out
}
