package dedup

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/locumdev/locum/runner/client"
)

// The embedding cache is one bbolt file in the operator's cache directory, shared by every
// repository: a vector depends on the text and the weights that embedded it, not on where the
// text lives. It is never under a repository: bbolt trusts the pages it maps, and a file a
// repository planted would be parsed by code that is not hardened against one.
//
// Layout: a bucket per embedding key (server kind, endpoint, model, digest), named by the key's
// hash, holding the key itself under "about" and a bucket "vectors" from the SHA-256 of a text
// to its vector: the day it was last used (4 bytes, days since 1970) and then little-endian
// float32s.

// CacheFileName is the cache's file in the operator's cache directory.
const CacheFileName = "embeddings.db"

var (
	aboutKey      = []byte("about")
	vectorsBucket = []byte("vectors")
)

// maxCachedVector bounds a value: no embedding model has vectors of 64k dimensions.
const maxCachedVector = 4 + 4<<16

// lockWait is how long a run waits for another locum to finish its transaction with the cache
// before it goes on without it: transactions are short, so a longer wait means a stuck process.
const lockWait = 10 * time.Second

// VectorCache is the embedding cache file. The zero value (no path) caches nothing.
type VectorCache struct {
	Path string
	// MaxBytes is the size past which a store evicts the least recently used vectors, down to
	// three quarters of it; 0 for no cap.
	MaxBytes int64
	// Wait is how long to wait for another process's transaction; 0 is lockWait.
	Wait time.Duration
	// now is the clock of last use; nil is time.Now.
	now func() time.Time
}

// CacheError is a cache that could not be read or written: the run goes on, fetching what it
// would have read.
type CacheError struct {
	Path string
	Err  error
}

func (e *CacheError) Error() string {
	return fmt.Sprintf("embedding cache %s: %v", e.Path, e.Err)
}

func (e *CacheError) Unwrap() error { return e.Err }

func (c VectorCache) today() uint32 { return uint32(c.clock().Unix() / 86400) }

func (c VectorCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// keyBucket names a key's bucket.
func keyBucket(key client.EmbeddingKey) []byte {
	sum := sha256.Sum256([]byte(strings.Join([]string{string(key.Kind), key.Endpoint, key.Model, key.Digest}, "\x00")))
	return []byte(hex.EncodeToString(sum[:16]))
}

// TextHash is what the cache keys a text's vector by.
func TextHash(text string) [32]byte { return sha256.Sum256([]byte(text)) }

func (c VectorCache) open(readOnly bool) (*bolt.DB, error) {
	if !readOnly {
		if err := os.MkdirAll(filepath.Dir(c.Path), 0o700); err != nil {
			return nil, &CacheError{c.Path, err}
		}
	}
	// A regular file or nothing: a link or a device where the cache should be is refused.
	if fi, err := os.Lstat(c.Path); err == nil && !fi.Mode().IsRegular() {
		return nil, &CacheError{c.Path, errors.New("not a regular file")}
	}
	wait := c.Wait
	if wait <= 0 {
		wait = lockWait
	}
	db, err := bolt.Open(c.Path, 0o600, &bolt.Options{Timeout: wait, ReadOnly: readOnly})
	if err != nil {
		if errors.Is(err, bolterrors.ErrTimeout) {
			err = fmt.Errorf("another process held it for %s", wait)
		}
		return nil, &CacheError{c.Path, err}
	}
	return db, nil
}

// Lookup reads the vectors of key for the texts hashed: out[i] is nil for a miss. stale are the
// hits last used before today, for Store to mark used. A cache that does not exist yet is all
// misses, not an error.
func (c VectorCache) Lookup(key client.EmbeddingKey, hashes [][32]byte) (out [][]float32, stale [][32]byte, err error) {
	out = make([][]float32, len(hashes))
	if c.Path == "" {
		return out, nil, nil
	}
	if c.absent() {
		return out, nil, nil
	}
	db, err := c.open(true)
	if err != nil {
		return out, nil, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(keyBucket(key))
		if b == nil {
			return nil
		}
		vb := b.Bucket(vectorsBucket)
		if vb == nil {
			return nil
		}
		today := c.today()
		for i, h := range hashes {
			v := vb.Get(h[:])
			if out[i] = decodeVector(v); out[i] != nil && binary.LittleEndian.Uint32(v) < today {
				stale = append(stale, h)
			}
		}
		return nil
	})
	if err != nil {
		return out, nil, &CacheError{c.Path, err}
	}
	return out, stale, nil
}

// decodeVector reads a stored value; anything but a whole, finite vector is a miss.
func decodeVector(v []byte) []float32 {
	if len(v) <= 4 || len(v) > maxCachedVector || len(v)%4 != 0 {
		return nil
	}
	out := make([]float32, (len(v)-4)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(v[4+4*i:]))
		if math.IsNaN(float64(out[i])) || math.IsInf(float64(out[i]), 0) {
			return nil
		}
	}
	return out
}

func encodeVector(day uint32, v []float32) []byte {
	out := make([]byte, 4+4*len(v))
	binary.LittleEndian.PutUint32(out, day)
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4+4*i:], math.Float32bits(x))
	}
	return out
}

// Entry is one vector to store.
type Entry struct {
	Hash   [32]byte
	Vector []float32
}

// Store writes the new vectors of key and marks the vectors read (used) as used today; then, past MaxBytes, it evicts the least recently used. It returns how many it
// evicted.
func (c VectorCache) Store(key client.EmbeddingKey, added []Entry, used [][32]byte) (int, error) {
	if c.Path == "" || len(added) == 0 && len(used) == 0 {
		return 0, nil
	}
	db, err := c.open(false)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	today := c.today()
	// Keys in order fill pages the way a B+tree likes; hashes in any order split them half full.
	slices.SortFunc(added, func(a, b Entry) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
	slices.SortFunc(used, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	// A transaction holds every page it writes in memory until it commits, so a cold screen's
	// vectors go in slices of storeBatch: 50,000 in one took 550 MiB.
	for len(added) > 0 || len(used) > 0 {
		na, nu := min(len(added), storeBatch), min(len(used), storeBatch)
		if err := c.update(db, key, today, added[:na], used[:nu]); err != nil {
			return 0, err
		}
		added, used = added[na:], used[nu:]
	}
	// The file holds the data and free pages, so a file within the cap needs no count.
	if c.MaxBytes <= 0 || fileBytes(db) <= c.MaxBytes {
		return 0, nil
	}
	n, err := evict(db, c.MaxBytes, c.MaxBytes*3/4)
	if err != nil {
		return n, &CacheError{c.Path, err}
	}
	return n, nil
}

// storeBatch is how many vectors one write transaction holds: about 12 MiB of 768 dimensions.
const storeBatch = 4096

func (c VectorCache) update(db *bolt.DB, key client.EmbeddingKey, today uint32, added []Entry, used [][32]byte) error {
	err := db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(keyBucket(key))
		if err != nil {
			return err
		}
		if b.Get(aboutKey) == nil {
			about, _ := json.Marshal(cacheAbout{Server: string(key.Kind), Endpoint: key.Endpoint, Model: key.Model, Digest: key.Digest})
			if err := b.Put(aboutKey, about); err != nil {
				return err
			}
		}
		vb, err := b.CreateBucketIfNotExists(vectorsBucket)
		if err != nil {
			return err
		}
		vb.FillPercent = 0.9
		for _, e := range added {
			if err := vb.Put(e.Hash[:], encodeVector(today, e.Vector)); err != nil {
				return err
			}
		}
		for _, h := range used {
			v := vb.Get(h[:])
			if len(v) < 4 || binary.LittleEndian.Uint32(v) >= today {
				continue
			}
			// v is the page's memory, valid only until the next write.
			nv := bytes.Clone(v)
			binary.LittleEndian.PutUint32(nv, today)
			if err := vb.Put(h[:], nv); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return &CacheError{c.Path, err}
	}
	return nil
}

func fileBytes(db *bolt.DB) int64 {
	var size int64
	_ = db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil })
	return size
}

// dataBytes is what the pages of every bucket take: the file less its free pages, counted from
// the buckets because bbolt knows its free pages only after a write in this process.
func dataBytes(tx *bolt.Tx) int64 {
	var n int64
	_ = tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
		st := b.Stats()
		n += int64(st.BranchAlloc + st.LeafAlloc)
		return nil
	})
	return n
}

// absent says there is no cache to read: no file, or an empty one, which a writer that has not
// yet initialised it (or died first) leaves.
func (c VectorCache) absent() bool {
	fi, err := os.Lstat(c.Path)
	return errors.Is(err, fs.ErrNotExist) || err == nil && fi.Mode().IsRegular() && fi.Size() == 0
}

type cacheAbout struct {
	Server   string `json:"server"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Digest   string `json:"digest,omitempty"`
}

// CacheModel is one embedding key's part of the cache.
type CacheModel struct {
	Server   string `json:"server"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Digest   string `json:"digest,omitempty"`
	Vectors  int    `json:"vectors"`
	// Screens counts the folders' last screens kept for re-runs.
	Screens int `json:"screens"`
	// LastUsed is the day a vector of it was last read or written, as YYYY-MM-DD.
	LastUsed string `json:"last_used"`
}

// CacheStats describe the cache file.
type CacheStats struct {
	Path string `json:"path"`
	// FileBytes is the file's size; Bytes what its data takes, the rest free pages a prune
	// gives back.
	FileBytes int64        `json:"file_bytes"`
	Bytes     int64        `json:"bytes"`
	Vectors   int          `json:"vectors"`
	Models    []CacheModel `json:"models"`
}

func dayString(day uint32) string {
	if day == 0 {
		return ""
	}
	return time.Unix(int64(day)*86400, 0).UTC().Format(time.DateOnly)
}

// Stats reads what the cache holds; a cache that does not exist is empty.
func (c VectorCache) Stats() (*CacheStats, error) {
	st := &CacheStats{Path: c.Path, Models: []CacheModel{}}
	if c.absent() {
		return st, nil
	}
	db, err := c.open(true)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if err := db.View(func(tx *bolt.Tx) error { return collectStats(tx, st) }); err != nil {
		return nil, &CacheError{c.Path, err}
	}
	return st, nil
}

// collectStats counts the vectors of each key, and the bytes of the pages the data is in; a
// read-only transaction does not know the free pages, so the pages are counted, not the file.
func collectStats(tx *bolt.Tx, st *CacheStats) error {
	st.FileBytes = tx.Size()
	return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
		bs := b.Stats()
		st.Bytes += int64(bs.BranchAlloc + bs.LeafAlloc)
		var about cacheAbout
		_ = json.Unmarshal(b.Get(aboutKey), &about)
		m := CacheModel{Server: about.Server, Endpoint: about.Endpoint, Model: about.Model, Digest: about.Digest}
		var last uint32
		if vb := b.Bucket(vectorsBucket); vb != nil {
			_ = vb.ForEach(func(_, v []byte) error {
				m.Vectors++
				if len(v) >= 4 {
					last = max(last, binary.LittleEndian.Uint32(v))
				}
				return nil
			})
		}
		if sb := b.Bucket(screensBucket); sb != nil {
			m.Screens = sb.Stats().KeyN
		}
		m.LastUsed = dayString(last)
		st.Vectors += m.Vectors
		st.Models = append(st.Models, m)
		return nil
	})
}

// PruneOptions say what a prune removes: everything, what was last used before a day, and the
// least recently used beyond a size.
type PruneOptions struct {
	All       bool
	OlderThan time.Duration
	MaxBytes  int64
}

// PruneReport is what a prune did.
type PruneReport struct {
	Removed     int   `json:"removed"`
	BytesBefore int64 `json:"file_bytes_before"`
	BytesAfter  int64 `json:"file_bytes_after"`
	Kept        int   `json:"kept"`
}

// Prune removes vectors by opts and compacts the file, so the disk gets back what they held.
func (c VectorCache) Prune(opts PruneOptions) (*PruneReport, error) {
	rep := &PruneReport{}
	fi, err := os.Lstat(c.Path)
	if errors.Is(err, fs.ErrNotExist) || c.absent() && !opts.All {
		return rep, nil
	}
	if err != nil {
		return nil, &CacheError{c.Path, err}
	}
	rep.BytesBefore = fi.Size()
	db, err := c.open(false)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var before CacheStats
	if err := db.View(func(tx *bolt.Tx) error { return collectStats(tx, &before) }); err != nil {
		return nil, &CacheError{c.Path, err}
	}
	if opts.All {
		rep.Removed = before.Vectors
		db.Close()
		if err := os.Remove(c.Path); err != nil {
			return nil, &CacheError{c.Path, err}
		}
		return rep, nil
	}
	if opts.OlderThan > 0 {
		cutoff := uint32(c.clock().Add(-opts.OlderThan).Unix() / 86400)
		// A folder's last screen goes with the vectors of its age.
		err := db.Update(func(tx *bolt.Tx) error {
			return tx.ForEach(func(_ []byte, b *bolt.Bucket) error {
				if _, err := deleteOlder(b.Bucket(screensBucket), cutoff); err != nil {
					return err
				}
				n, err := deleteOlder(b.Bucket(vectorsBucket), cutoff)
				rep.Removed += n
				return err
			})
		})
		if err != nil {
			return nil, &CacheError{c.Path, err}
		}
	}
	if opts.MaxBytes > 0 {
		n, err := evict(db, opts.MaxBytes, opts.MaxBytes)
		rep.Removed += n
		if err != nil {
			return nil, &CacheError{c.Path, err}
		}
	}
	rep.Kept = before.Vectors - rep.Removed
	if err := c.compact(db); err != nil {
		return nil, err
	}
	if fi, err := os.Lstat(c.Path); err == nil {
		rep.BytesAfter = fi.Size()
	}
	return rep, nil
}

// compact copies the live data of db into a new file and puts it in the cache's place; db is
// closed either way. A run that was waiting for the old file's lock writes to the old file, and
// what it wrote is lost: it costs the next run those requests.
func (c VectorCache) compact(db *bolt.DB) error {
	f, err := os.CreateTemp(filepath.Dir(c.Path), ".embeddings-*.compact")
	if err != nil {
		db.Close()
		return &CacheError{c.Path, err}
	}
	tmp := f.Name()
	f.Close()
	dst, err := bolt.Open(tmp, 0o600, &bolt.Options{Timeout: lockWait})
	if err != nil {
		db.Close()
		os.Remove(tmp)
		return &CacheError{c.Path, err}
	}
	err = bolt.Compact(dst, db, 64<<20)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	db.Close()
	if err == nil {
		err = os.Rename(tmp, c.Path)
	}
	if err != nil {
		os.Remove(tmp)
		return &CacheError{c.Path, err}
	}
	return nil
}

// deleteOlder deletes the values of b (nil: none) last used before the day cutoff.
func deleteOlder(b *bolt.Bucket, cutoff uint32) (int, error) {
	if b == nil {
		return 0, nil
	}
	var old [][]byte
	_ = b.ForEach(func(k, v []byte) error {
		if len(v) < 4 || binary.LittleEndian.Uint32(v) < cutoff {
			old = append(old, bytes.Clone(k))
		}
		return nil
	})
	for _, k := range old {
		if err := b.Delete(k); err != nil {
			return 0, err
		}
	}
	return len(old), nil
}

// evict removes the least recently used vectors and screens of every key, oldest first, when the
// data takes more than over, until it takes about target; it returns the vectors removed. What an
// entry takes in pages is estimated from its bytes, in the proportion of all the data's pages to
// all its bytes.
func evict(db *bolt.DB, over, target int64) (int, error) {
	type aged struct {
		bucket, sub, key []byte
		day              uint32
		size             int64
	}
	removed := 0
	err := db.Update(func(tx *bolt.Tx) error {
		data := dataBytes(tx)
		if data <= over {
			return nil
		}
		var all []aged
		var total int64
		err := tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			for _, sub := range [][]byte{vectorsBucket, screensBucket} {
				sb := b.Bucket(sub)
				if sb == nil {
					continue
				}
				err := sb.ForEach(func(k, v []byte) error {
					var day uint32
					if len(v) >= 4 {
						day = binary.LittleEndian.Uint32(v)
					}
					size := int64(len(k) + len(v))
					total += size
					all = append(all, aged{bytes.Clone(name), sub, bytes.Clone(k), day, size})
					return nil
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil || total == 0 {
			return err
		}
		slices.SortStableFunc(all, func(a, b aged) int { return int(a.day) - int(b.day) })
		need := float64(data-target) * float64(total) / float64(data)
		var gone float64
		for _, a := range all {
			if gone >= need {
				break
			}
			if err := tx.Bucket(a.bucket).Bucket(a.sub).Delete(a.key); err != nil {
				return err
			}
			gone += float64(a.size)
			if bytes.Equal(a.sub, vectorsBucket) {
				removed++
			}
		}
		return nil
	})
	return removed, err
}
