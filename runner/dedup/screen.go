package dedup

import (
	"crypto/sha256"
	"encoding/binary"
	"math"
	"path/filepath"
	"strconv"

	"github.com/viterin/vek/vek32"
	bolt "go.etcd.io/bbolt"

	"github.com/locumdev/locum/runner/client"
)

// A screen by embeddings is kept beside the vectors that made it: the entries, each by its name
// and text, and every pair at or above the threshold among them. A re-run of the folder scores
// only the entries that are new or changed, against all the others, and takes the pairs among
// the rest from the screen, since their vectors, and so their scores, are the same.

// maxScreenPairs is the most pairs a kept screen holds (16 bytes each); a screen with more is
// not kept, and its re-run scores everything.
const maxScreenPairs = 1 << 20

// reuseShare bounds what a re-run reuses: with more than one entry in reuseShare new or changed,
// scoring each of them against all the others, a row at a time, costs about what a whole screen
// costs, which scores blocks of rows at once.
const reuseShare = 4

var screensBucket = []byte("screens")

// ScreenPair is a pair of a kept screen, by the entries' places in it.
type ScreenPair struct {
	I, J  uint32
	Score float64
}

// Screen is a kept screen: its entries' identities (EntryID) and its pairs.
type Screen struct {
	Method  string
	Entries [][32]byte
	Pairs   []ScreenPair
}

// EntryID is an entry as a kept screen knows it: its name and its text's TextHash.
func EntryID(name string, text [32]byte) [32]byte {
	return sha256.Sum256(append([]byte(name+"\x00"), text[:]...))
}

// screenID names the screen of one folder at one threshold, scored exactly or as the exact
// setting allows.
func screenID(dir string, threshold float64, exact string) []byte {
	sum := sha256.Sum256([]byte(filepath.Clean(dir) + "\x00" + strconv.FormatFloat(threshold, 'g', -1, 64) + "\x00" + exact))
	return sum[:16]
}

func encodeScreen(day uint32, s *Screen) []byte {
	out := make([]byte, 0, 13+32*len(s.Entries)+16*len(s.Pairs))
	out = binary.LittleEndian.AppendUint32(out, day)
	method := byte(0)
	if s.Method == "lsh" {
		method = 1
	}
	out = append(out, method)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(s.Entries)))
	for _, e := range s.Entries {
		out = append(out, e[:]...)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(len(s.Pairs)))
	for _, p := range s.Pairs {
		out = binary.LittleEndian.AppendUint32(out, p.I)
		out = binary.LittleEndian.AppendUint32(out, p.J)
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(p.Score))
	}
	return out
}

// decodeScreen reads a kept screen; anything but a whole one, its pairs inside it, is nil.
func decodeScreen(v []byte) *Screen {
	if len(v) < 9 || v[4] > 1 {
		return nil
	}
	s := &Screen{Method: "exact"}
	if v[4] == 1 {
		s.Method = "lsh"
	}
	n := uint64(binary.LittleEndian.Uint32(v[5:]))
	rest := v[9:]
	if uint64(len(rest)) < 32*n+4 {
		return nil
	}
	s.Entries = make([][32]byte, n)
	for i := range s.Entries {
		copy(s.Entries[i][:], rest[32*i:])
	}
	rest = rest[32*n:]
	m := uint64(binary.LittleEndian.Uint32(rest))
	rest = rest[4:]
	if uint64(len(rest)) != 16*m || m > maxScreenPairs {
		return nil
	}
	s.Pairs = make([]ScreenPair, m)
	for k := range s.Pairs {
		p := ScreenPair{I: binary.LittleEndian.Uint32(rest[16*k:]), J: binary.LittleEndian.Uint32(rest[16*k+4:]),
			Score: math.Float64frombits(binary.LittleEndian.Uint64(rest[16*k+8:]))}
		if p.I >= p.J || uint64(p.J) >= n || math.IsNaN(p.Score) || p.Score < -1 || p.Score > 1 {
			return nil
		}
		s.Pairs[k] = p
	}
	return s
}

// LoadScreen reads the kept screen id of key; nil when there is none (or no cache).
func (c VectorCache) LoadScreen(key client.EmbeddingKey, id []byte) (*Screen, error) {
	if c.Path == "" || c.absent() {
		return nil, nil
	}
	db, err := c.open(true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var s *Screen
	err = db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(keyBucket(key)); b != nil {
			if sb := b.Bucket(screensBucket); sb != nil {
				s = decodeScreen(sb.Get(id))
			}
		}
		return nil
	})
	if err != nil {
		return nil, &CacheError{c.Path, err}
	}
	return s, nil
}

// StoreScreen keeps s as the screen id of key, in place of the one before.
func (c VectorCache) StoreScreen(key client.EmbeddingKey, id []byte, s *Screen) error {
	if c.Path == "" {
		return nil
	}
	db, err := c.open(false)
	if err != nil {
		return err
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(keyBucket(key))
		if err != nil {
			return err
		}
		sb, err := b.CreateBucketIfNotExists(screensBucket)
		if err != nil {
			return err
		}
		return sb.Put(id, encodeScreen(c.today(), s))
	})
	if err != nil {
		return &CacheError{c.Path, err}
	}
	return nil
}

// reuse is how a re-run maps the kept screen onto this one: for each of its entries, the place
// of the same name and text now (-1 when gone), and the entries that are new or changed.
type reuse struct {
	prev    *Screen
	now     []int32
	changed []int
}

// planReuse says how to reuse prev for entries ids, or nil when too many changed to gain.
func planReuse(prev *Screen, ids [][32]byte) *reuse {
	if prev == nil {
		return nil
	}
	place := make(map[[32]byte]int32, len(prev.Entries))
	for i, id := range prev.Entries {
		place[id] = int32(i)
	}
	r := &reuse{prev: prev, now: make([]int32, len(prev.Entries))}
	for i := range r.now {
		r.now[i] = -1
	}
	for i, id := range ids {
		if o, ok := place[id]; ok {
			r.now[o] = int32(i)
		} else {
			r.changed = append(r.changed, i)
		}
	}
	if len(r.changed)*reuseShare > len(ids) {
		return nil
	}
	return r
}

// reusedPairs adds to set the kept pairs whose entries are both unchanged, and scores every new
// or changed entry against all the others.
func reusedPairs(u *Unit, names []string, threshold float64, r *reuse, set *pairSet) {
	// Into a child, as every scorer adds, so that merging hands its pairs to the grouper.
	kept := set.child()
	for _, p := range r.prev.Pairs {
		a, b := r.now[p.I], r.now[p.J]
		if a < 0 || b < 0 {
			continue
		}
		i, j := int(min(a, b)), int(max(a, b))
		kept.add(Pair{Score: p.Score, A: names[i], B: names[j], i: i, j: j})
	}
	set.merge(kept)
	if u == nil || u.dim == 0 || len(r.changed) == 0 {
		return
	}
	isChanged := make([]bool, u.rows)
	for _, c := range r.changed {
		isChanged[c] = true
	}
	set.inWorkers(min(len(r.changed), parallelism()), func(out *pairSet, w, workers int) {
		for k := w; k < len(r.changed); k += workers {
			c := r.changed[k]
			for o := range u.rows {
				// A pair of two changed entries is scored once, by the later of them.
				if o == c || isChanged[o] && o > c {
					continue
				}
				if s := float64(vek32.Dot(u.row(c), u.row(o))); atLeast(s, threshold) {
					i, j := min(c, o), max(c, o)
					out.add(Pair{Score: round4(math.Max(-1, math.Min(1, s))), A: names[i], B: names[j], i: i, j: j})
				}
			}
		}
	})
}
