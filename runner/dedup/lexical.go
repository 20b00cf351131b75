package dedup

import (
	"math"
	"runtime"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Lexical screening compares the words of entries, not their meaning: MinHash signatures over
// word shingles estimate the Jaccard similarity of every two entries' shingle sets, and banded
// locality-sensitive hashing of the signatures picks which pairs to estimate, so the work grows
// with the number of files and the pairs found, not with every pair. It needs no server.

const (
	// ShingleWords is how many consecutive words make one shingle: long enough that two texts
	// on one topic do not look alike by shared vocabulary alone, short enough that one edited
	// word changes only three shingles.
	ShingleWords = 3
	// SignatureSize is the number of MinHash values per entry. An estimate from 128 values has
	// a standard error of at most 0.044 (at a Jaccard of 0.5).
	SignatureSize = 128
)

// Signature is the MinHash signature of one entry; a nil signature is an entry with no words.
type Signature []uint32

// shingleHashes lists the 64-bit hashes of the text's word shingles, duplicates included (they
// do not change a minimum). Words are runs of letters and digits, compared in lower case. A text
// with fewer words than a shingle is one shingle of all its words.
func shingleHashes(text string, buf []uint64) []uint64 {
	out := buf[:0]
	var words [ShingleWords]uint64 // hashes of the last words, as a ring
	n := 0
	word := uint64(fnvOffset)
	inWord := false
	emit := func() {
		words[n%ShingleWords] = word
		n++
		if n >= ShingleWords {
			out = append(out, combine(words[:], n))
		}
		word, inWord = fnvOffset, false
	}
	for i := 0; i < len(text); {
		r, size := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		i += size
		// Lower of upper, not lower alone: a letter with two lower forms (ϰ and κ, ſ and s)
		// reads as one letter whatever its case, and a mark whose upper case is a letter
		// (U+0345, whose upper is Ι) is that letter either way.
		r = unicode.ToLower(unicode.ToUpper(r))
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			for k := 0; k < 4 && r != 0; k++ {
				word = (word ^ uint64(byte(r))) * fnvPrime
				r >>= 8
			}
			inWord = true
			continue
		}
		if inWord {
			emit()
		}
	}
	if inWord {
		emit()
	}
	if n > 0 && n < ShingleWords {
		out = append(out, combine(words[:], n))
	}
	return out
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// combine hashes the last min(n, ShingleWords) words in order.
func combine(ring []uint64, n int) uint64 {
	h := uint64(fnvOffset)
	k := min(n, ShingleWords)
	for j := n - k; j < n; j++ {
		h = mix64(h ^ ring[j%ShingleWords])
	}
	return h
}

// mix64 is the finaliser of SplitMix64: every input bit reaches every output bit.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// minhashSeeds are the odd multipliers and offsets of the SignatureSize hash functions, fixed so
// that signatures, and so results, are the same on every run.
var minhashSeeds = func() (s [SignatureSize][2]uint64) {
	x := uint64(0x9e3779b97f4a7c15)
	for i := range s {
		x += 0x9e3779b97f4a7c15
		s[i][0] = mix64(x) | 1
		x += 0x9e3779b97f4a7c15
		s[i][1] = mix64(x)
	}
	return s
}()

// MinHash gives the text's signature: for each hash function, the least hash over its shingles.
func MinHash(text string) Signature {
	return minHash(shingleHashes(text, nil))
}

func minHash(shingles []uint64) Signature {
	if len(shingles) == 0 {
		return nil
	}
	var mins [SignatureSize]uint64
	for i := range mins {
		mins[i] = math.MaxUint64
	}
	for _, h := range shingles {
		for i := range mins {
			// A multiply-add permutation of the 64-bit shingle hash; its upper half is a
			// universal hash of it, which is all MinHash needs.
			if v := h*minhashSeeds[i][0] + minhashSeeds[i][1]; v < mins[i] {
				mins[i] = v
			}
		}
	}
	sig := make(Signature, SignatureSize)
	for i, m := range mins {
		sig[i] = uint32(m >> 32)
	}
	return sig
}

// Signatures computes the signatures of texts on every core.
func Signatures(texts []string) []Signature {
	out := make([]Signature, len(texts))
	parallel(len(texts), func(from, to int) {
		var buf []uint64
		for i := from; i < to; i++ {
			buf = shingleHashes(texts[i], buf)
			out[i] = minHash(buf)
		}
	})
	return out
}

// parallel runs fn over [0,n) split into one contiguous range per core.
func parallel(n int, fn func(from, to int)) {
	workers := min(runtime.GOMAXPROCS(0), max(n, 1))
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	step := (n + workers - 1) / workers
	for from := 0; from < n; from += step {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			fn(from, to)
		}(from, min(from+step, n))
	}
	wg.Wait()
}

// EstimatedJaccard is the share of signature positions two entries agree on; an entry with no
// words scores 0 against everything.
func EstimatedJaccard(a, b Signature) float64 {
	if a == nil || b == nil {
		return 0
	}
	same := 0
	for i := range a {
		if a[i] == b[i] {
			same++
		}
	}
	return float64(same) / SignatureSize
}

// bandRows picks how many signature rows make one band for a threshold: the most rows (so the
// fewest chance candidates) for which a pair exactly at the threshold still becomes a candidate
// with probability at least 0.999. Zero means every pair is a candidate.
func bandRows(threshold float64) int {
	for _, r := range []int{16, 8, 4, 2, 1} {
		bands := SignatureSize / r
		if 1-math.Pow(1-math.Pow(threshold, float64(r)), float64(bands)) >= 0.999 {
			return r
		}
	}
	return 0
}

// LexicalPairs lists the pairs whose estimated Jaccard similarity is at or above threshold,
// highest first, ties in name order. Candidates come from banded LSH over the signatures; a pair
// at the threshold is missed with probability under 0.001, and pairs further above it far less.
func LexicalPairs(sigs []Signature, names []string, threshold float64) []Pair {
	set := &pairSet{}
	lexicalPairs(sigs, names, threshold, set)
	return set.sorted()
}

// lexicalPairs adds the pairs LexicalPairs finds to set.
func lexicalPairs(sigs []Signature, names []string, threshold float64, set *pairSet) {
	add := func(i, j int) {
		if s := EstimatedJaccard(sigs[i], sigs[j]); atLeast(s, threshold) {
			set.add(Pair{Score: s, A: names[i], B: names[j], i: i, j: j})
		}
	}
	rows := 0
	if threshold > 0 {
		rows = bandRows(threshold)
	}
	if rows == 0 {
		for i := range sigs {
			for j := i + 1; j < len(sigs); j++ {
				add(i, j)
			}
		}
		return
	}
	seen := map[uint64]struct{}{}
	buckets := map[uint64][]int32{}
	for band := 0; band < SignatureSize/rows; band++ {
		clear(buckets)
		for i, sig := range sigs {
			if sig == nil {
				continue
			}
			h := uint64(band) + 1
			for _, v := range sig[band*rows : (band+1)*rows] {
				h = mix64(h ^ uint64(v))
			}
			buckets[h] = append(buckets[h], int32(i))
		}
		for _, members := range buckets {
			for x := 0; x < len(members); x++ {
				for y := x + 1; y < len(members); y++ {
					i, j := int(members[x]), int(members[y])
					key := uint64(i)<<32 | uint64(j)
					if _, ok := seen[key]; ok {
						continue
					}
					seen[key] = struct{}{}
					add(i, j)
				}
			}
		}
	}
}
