package dedup

import (
	"math"
	"runtime"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Lexical screening compares the words of entries, not their meaning. Banded locality-sensitive
// hashing of MinHash signatures over word shingles picks candidate pairs, so the work grows with
// the number of files and the pairs found, not with every pair; each candidate is then scored
// exactly from the two shingle sets, so a printed score is never an estimate and a pair is not
// dropped for an estimate that fell below the threshold. It needs no server.

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

// Shingles gives the text's distinct shingle hashes, sorted: the set a lexical score compares.
func Shingles(text string) []uint64 {
	return distinct(shingleHashes(text, nil))
}

// distinct sorts hashes and drops repeats, in place.
func distinct(h []uint64) []uint64 {
	slices.Sort(h)
	return slices.Compact(h)
}

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

// Lexical is what a lexical screen holds of each entry: its shingle set and its signature.
type Lexical struct {
	Set []uint64
	Sig Signature
}

// LexicalEntries computes the shingle sets and signatures of texts on every core.
func LexicalEntries(texts []string) []Lexical {
	out := make([]Lexical, len(texts))
	parallel(len(texts), func(from, to int) {
		for i := from; i < to; i++ {
			set := Shingles(texts[i])
			out[i] = Lexical{Set: slices.Clip(set), Sig: minHash(set)}
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

// bandRows picks how many signature rows make one band for a Jaccard similarity: the most rows
// (so the fewest chance candidates) for which a pair at that similarity still becomes a
// candidate with probability at least 0.999. Zero means every pair is a candidate.
func bandRows(jaccard float64) int {
	for _, r := range []int{16, 8, 4, 2, 1} {
		bands := SignatureSize / r
		if 1-math.Pow(1-math.Pow(jaccard, float64(r)), float64(bands)) >= 0.999 {
			return r
		}
	}
	return 0
}
