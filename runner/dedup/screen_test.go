package dedup

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locumdev/locum/runner/internal/runtest"
)

// screenOf scores every pair of vecs exactly and keeps the screen, as a first run does.
func screenOf(t *testing.T, vecs [][]float64, names, texts []string, threshold float64) (*Screen, []Pair) {
	t.Helper()
	set := &pairSet{record: true}
	similarPairs(Normalize(vecs), names, threshold, set)
	require.False(t, set.overflow)
	ids := make([][32]byte, len(names))
	for i := range names {
		ids[i] = EntryID(names[i], TextHash(texts[i]))
	}
	return &Screen{Method: "exact", Entries: ids, Pairs: set.recorded}, set.sorted()
}

// A re-run that reuses the last screen lists exactly the pairs a whole new screen lists, with
// entries changed, removed, added and renamed, whichever side of a pair they are on; and it
// keeps a screen of its own that the next re-run reuses as well.
func TestReusedScreenMatchesAWholeScreen(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n, threshold = 400, 0.8
	vecs := plantedSet(rng, n, 24, 150, threshold)
	names, texts := make([]string, n), make([]string, n)
	for i := range n {
		names[i], texts[i] = fmt.Sprintf("%04d.md", i), fmt.Sprintf("text %d", i)
	}
	prev, _ := screenOf(t, vecs, names, texts, threshold)
	require.NotEmpty(t, prev.Pairs)

	// Change five entries (two of them into near-copies of others, one of a changed one), drop
	// three, add two, rename one: the names stay sorted, as the entry step lists them.
	edit := func(i int, v []float64, text string) { vecs[i], texts[i] = v, text }
	edit(int(prev.Pairs[0].I), runtest.RandomUnit(rng, 1, 24)[0], "changed a")
	edit(17, nearby(rng, vecs[200], 0.9), "changed b")
	edit(18, nearby(rng, vecs[17], 0.95), "changed c")
	edit(int(prev.Pairs[1].J), nearby(rng, vecs[3], 0.85), "changed d")
	edit(399, runtest.RandomUnit(rng, 1, 24)[0], "changed e")
	drop := map[int]bool{int(prev.Pairs[2].I): true, 50: true, 51: true}
	var nv [][]float64
	var nn, nt []string
	for i := range n {
		if drop[i] {
			continue
		}
		name := names[i]
		if i == 100 {
			name = "0100-renamed.md"
		}
		nv, nn, nt = append(nv, vecs[i]), append(nn, name), append(nt, texts[i])
	}
	nv = append(nv, nearby(rng, vecs[5], 0.99), runtest.RandomUnit(rng, 1, 24)[0])
	nn, nt = append(nn, "9998.md", "9999.md"), append(nt, "new a", "new b")

	check := func(prev *Screen, vecs [][]float64, names, texts []string) *Screen {
		t.Helper()
		want, wantPairs := screenOf(t, vecs, names, texts, threshold)
		plan := planReuse(prev, want.Entries)
		require.NotNil(t, plan)
		set := &pairSet{record: true, group: newGrouper(len(names))}
		reusedPairs(Normalize(vecs), names, threshold, plan, set)
		kept := &Screen{Method: "exact", Entries: want.Entries, Pairs: set.recorded}
		groups := set.group.groups(names)
		got := set.sorted()
		assert.Equal(t, pairKeys(wantPairs), pairKeys(got))
		assert.Len(t, got, len(wantPairs))
		whole := &pairSet{group: newGrouper(len(names))}
		similarPairs(Normalize(vecs), names, threshold, whole)
		assert.Equal(t, whole.group.groups(names), groups)
		return kept
	}
	next := check(prev, nv, nn, nt)

	// The screen the re-run kept serves the next one.
	nv[7], nt[7] = nearby(rng, nv[300], 0.97), "changed again"
	check(next, nv, nn, nt)
}

// Too many entries changed to gain: the re-run scores everything.
func TestReuseNeedsMostEntriesUnchanged(t *testing.T) {
	prev := &Screen{Entries: make([][32]byte, 16)}
	for i := range prev.Entries {
		prev.Entries[i] = EntryID(fmt.Sprint(i), [32]byte{})
	}
	ids := append([][32]byte(nil), prev.Entries...)
	for i := range 4 {
		ids[i] = EntryID(fmt.Sprint("new ", i), [32]byte{})
	}
	assert.NotNil(t, planReuse(prev, ids), "four in sixteen")
	ids[4] = EntryID("new 4", [32]byte{})
	assert.Nil(t, planReuse(prev, ids), "five in sixteen")
	assert.Nil(t, planReuse(nil, ids))
}

// A stored screen comes back as stored; a value cut short, with a pair outside it or in the
// wrong order, or with a score that is not one, is no screen.
func TestScreenEncoding(t *testing.T) {
	s := &Screen{Method: "lsh", Entries: [][32]byte{EntryID("a", TextHash("1")), EntryID("b", TextHash("2")), EntryID("c", TextHash("3"))},
		Pairs: []ScreenPair{{I: 0, J: 2, Score: 0.9123}, {I: 1, J: 2, Score: 1}}}
	data := encodeScreen(7, s)
	assert.Equal(t, s, decodeScreen(data))
	for name, bad := range map[string]*Screen{
		"outside":  {Entries: s.Entries[:2], Pairs: []ScreenPair{{I: 0, J: 2, Score: 0.9}}},
		"reversed": {Entries: s.Entries, Pairs: []ScreenPair{{I: 2, J: 0, Score: 0.9}}},
		"score":    {Entries: s.Entries, Pairs: []ScreenPair{{I: 0, J: 1, Score: 2}}},
	} {
		assert.Nil(t, decodeScreen(encodeScreen(7, bad)), name)
	}
	for cut := range len(data) {
		assert.Nil(t, decodeScreen(data[:cut]), "cut at %d", cut)
	}
}

// FuzzCachedValues feeds the decoders of the cache's values anything: they return a whole value
// or nothing, never panic.
func FuzzCachedValues(f *testing.F) {
	f.Add(encodeScreen(1, &Screen{Entries: [][32]byte{{1}, {2}}, Pairs: []ScreenPair{{I: 0, J: 1, Score: 0.5}}}))
	f.Add(encodeVector(1, []float32{1, 2}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if s := decodeScreen(data); s != nil {
			for _, p := range s.Pairs {
				if p.I >= p.J || int(p.J) >= len(s.Entries) {
					t.Fatalf("pair %v outside %d entries", p, len(s.Entries))
				}
			}
		}
		if v := decodeVector(data); v != nil && len(v) != (len(data)-4)/4 {
			t.Fatalf("vector of %d from %d bytes", len(v), len(data))
		}
	})
}
