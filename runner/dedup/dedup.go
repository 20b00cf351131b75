// Package dedup is locum's dedup mode: near-duplicate entries of a folder found by embeddings
// (exact tiled scoring or random-hyperplane candidates) or by word shingles, with the embedding
// cache and the scoring kernel.
package dedup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// JournalPairs is how many of the top pairs the journal keeps; the count says how many there were.
const JournalPairs = 100

// Options is one screen of a folder.
type Options struct {
	// Dir is the folder as the caller named it; a relative one is read from Cwd ("" the
	// process's own directory).
	Dir, Cwd string
	Root     string
	NoCache  bool
	// Cache is the embedding cache; its zero value (and NoCache) keeps none.
	Cache VectorCache
	// Keep, when above 0, keeps only the Keep highest pairs (and the journal's top pairs), so a
	// screen that shows its top pairs holds no more however many pass the threshold; Result.Total
	// still counts them all. 0 keeps every pair, as --json needs.
	Keep int
	// Pairs lists the pairs themselves; otherwise the screen joins them into groups and keeps
	// only the journal's top pairs.
	Pairs bool
}

// The thresholds a screen uses when nobody set one, chosen on the labelled corpus
// (testdata/labelled): every near-duplicate kind scores above them, and notes on the same topic
// in other words below.
const (
	// DefaultCosine is the embedding threshold: all-MiniLM-L6-v2 scored the near-duplicates from
	// 0.857 and same-topic notes at most 0.622.
	DefaultCosine = 0.8
	// DefaultJaccard is the lexical threshold: the near-duplicates scored from 0.616 and
	// same-topic notes 0 (three-word shingles are rarely shared by chance).
	DefaultJaccard = 0.5
)

// Result is what a screen found.
type Result struct {
	Files []string
	// Groups join the pairs at or above the threshold, largest first (unless Options.Pairs).
	Groups []Group
	// Pairs are the pairs at or above the threshold, highest first: all of them, or the highest
	// Options.Keep (the journal's top pairs for a screen by groups); Total counts all.
	Pairs     []Pair
	Total     int
	Threshold float64
	Cached    int
	// Fitted counts the entries longer than the embedding model takes at once, embedded in
	// pieces whose vectors were pooled.
	Fitted int
	// Picked is the embedding model chosen from the server's list, when none was configured that
	// the server lists; "" otherwise.
	Picked string
	// Method is how pairs were scored: "exact" (cosine of every pair), "lsh" (cosine of
	// candidates from random-hyperplane hashing), or "lexical" (estimated Jaccard of shingles).
	Method string
	// Why says why auto chose lexical; "" otherwise.
	Why string
	// Separation is how a sample of all pairs scored, for a screen by embeddings; nil otherwise.
	Separation *Separation
	// Reused counts the entries whose pairs among themselves came from the folder's last screen,
	// unchanged in name and text; only the others were scored, against all.
	Reused int
	// CacheProblem says why the embedding cache was not read or written; "" when it was, or
	// when there was none to use.
	CacheProblem string
}

// Details are a screen's part of its result and of its journal's run_end, written once it
// scored.
type Details struct {
	Method    string  `json:"method"`
	Dir       string  `json:"dir"`
	Files     int     `json:"files"`
	Threshold float64 `json:"threshold"`
	// Groups are a screen by groups' alone, Pairs a screen by pairs' (the result's every pair;
	// the journal's top JournalPairs, of a screen by groups too).
	Groups []Group `json:"groups,omitzero"`
	Pairs  []Pair  `json:"pairs,omitzero"`
	// PairsTotal counts the pairs at or above the threshold: a screen by groups', and the
	// journal's where it keeps fewer pairs than there were.
	PairsTotal *int `json:"pairs_total,omitempty"`
	// Separation is a screen by embeddings' (Result.Separation).
	Separation *Separation `json:"separation,omitempty"`
	Cached     int         `json:"cached"`
	Fitted     int         `json:"fitted,omitempty"`
	// UnchangedSince says the folder is as the last screen found it.
	UnchangedSince string `json:"unchanged_since,omitempty"`
	Reused         int    `json:"reused,omitempty"`
	// top are the pairs a screen by groups keeps for the journal; total counts every pair.
	top   []Pair
	total int
}

// JournalDetails are what run_end keeps of the details: the top JournalPairs pairs, with their
// count where there were more, so a screen of a million pairs does not write tens of megabytes.
func (d *Details) JournalDetails() any {
	j := *d
	switch {
	case d.Groups != nil:
		j.Pairs = d.top
	case d.total > JournalPairs:
		j.Pairs = d.Pairs[:min(JournalPairs, len(d.Pairs))]
		j.PairsTotal = &d.total
	}
	return &j
}

type dedup struct {
	opts    Options
	names   []string
	texts   []string
	vectors [][]float32
	lexical bool
	// dir is the folder as read; cache and key the embedding cache and the key of its vectors,
	// once the embed step has chosen them (the zero cache when there is none to use).
	dir string
	// hashes are the texts' TextHash, when there is a cache.
	hashes [][32]byte
	cache  VectorCache
	key    client.EmbeddingKey
	// embedTime is what getting the vectors took, from the cache or the server: exact scoring
	// that would take longer gives way to LSH.
	embedTime time.Duration
	result    *Result
}

// Steps is the dedup workflow: list the entries, measure each against the per-file budget,
// check the endpoint, choose the method, embed (from the cache where it can), score. A lexical
// screen never connects.
func Steps(opts Options, out *Result) []engine.Step {
	d := &dedup{opts: opts, result: out}
	return []engine.Step{
		{Name: "entries", Run: d.entries},
		{Name: "connect", Run: func(_ context.Context, r *engine.Run) error {
			if r.Spec.Settings.String(packs.Method) == "lexical" {
				return nil
			}
			return r.Connect()
		}},
		{Name: "method", Run: d.choose},
		{Name: "embed", Run: d.embed},
		{Name: "score", Run: d.score},
	}
}

// choose settles the method and the model: embeddings with a model someone named, or the
// default one when the server lists it, or else the one the server lists whose name marks it as
// an embedding model (status picks by the same rule); with none, auto screens words, so dedup
// works with no server at all, and embedding is refused. A model the server does not list is
// never sent.
func (d *dedup) choose(ctx context.Context, r *engine.Run) error {
	s := r.Spec.Settings
	method := s.String(packs.Method)
	model := s.String(packs.EmbedModel)
	switch {
	case method == "lexical":
		d.lexical = true
	case model != "" && s.OverridesBuiltin(packs.EmbedModel):
	case model == "" && method == "auto":
		d.lexical, d.result.Why = true, "no embedding model is configured"
	default:
		info, err := r.Client.Probe(ctx)
		why := ""
		switch {
		case errors.As(err, new(*client.UnreachableError)):
			why = fmt.Sprintf("no server answers at %s", r.Client.BaseURL())
		case err != nil:
			// The server's own words stay out of the note: it is printed on the terminal.
			why = fmt.Sprintf("the server at %s did not list its models", r.Client.BaseURL())
		case model != "" && info.Has(model):
		case info.EmbeddingModel() != "":
			picked := info.EmbeddingModel()
			s.Set(packs.EmbedModel, picked, client.PickedEmbedSource)
			r.Spec.Model = picked
			d.result.Picked = picked
			r.Emit(engine.EmbedModelEvent{Model: picked, Source: client.PickedEmbedSource})
		default:
			why = fmt.Sprintf("the server at %s lists no embedding model (none named %s, and no name marks one)", r.Client.BaseURL(), model)
		}
		switch {
		case why != "" && method == "auto":
			d.lexical, d.result.Why = true, why
		case why != "" && errors.As(err, new(*client.UnreachableError)):
			return err
		case why != "":
			return &engine.RefusalError{Reason: why + "; name the embedding model to use"}
		}
	}
	if d.lexical {
		r.Spec.Model = ""
		r.Emit(engine.MethodEvent{Method: "lexical", Why: d.result.Why})
	}
	return nil
}

// Entries lists the files dedup compares: regular files directly in dir whose name matches glob
// (in any letter case), sorted by name, without README.md (it describes the folder).
func Entries(dir, glob string) ([]string, error) {
	return entriesNamed(dir, dir, glob)
}

// dirError is a folder that cannot be read, named as the caller named it.
func dirError(named string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return engine.BadInputf("{dir} %s: %v", named, err)
}

// entriesNamed is Entries for dir, which the caller named as named.
func entriesNamed(dir, named, glob string) ([]string, error) {
	if _, err := path.Match(strings.ToLower(glob), ""); err != nil {
		return nil, engine.BadInputf("{glob} %q is not a valid pattern: %v", glob, err)
	}
	list, err := os.ReadDir(dir)
	if err != nil {
		return nil, dirError(named, err)
	}
	var out []string
	for _, e := range list {
		name := e.Name()
		if !e.Type().IsRegular() || strings.EqualFold(name, "README.md") {
			continue
		}
		if ok, _ := path.Match(strings.ToLower(glob), strings.ToLower(name)); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ConfineDir is the folder dedup reads for dir: a folder inside root (as named) must stay inside
// it once its symbolic links are resolved, so a committed link cannot send files from
// elsewhere to the server; a folder the operator names outside root is read as named. The
// folder to read is absolute; a relative dir is read from cwd ("" the process's own directory).
func ConfineDir(root, cwd, dir string) (string, error) {
	abs := dir
	if cwd != "" && !filepath.IsAbs(dir) {
		abs = filepath.Join(cwd, dir)
	}
	abs, err := filepath.Abs(abs)
	if err != nil || root == "" {
		return abs, err
	}
	if !untrusted.Inside(root, abs) {
		return abs, nil
	}
	real, err := untrusted.Confine(root, abs)
	var out *untrusted.ConfineError
	if errors.As(err, &out) {
		return "", engine.Refusalf("{dir} %s leads out of the repository (to %s) through a symbolic link; dedup sends only the repository's own files; name the folder it leads to, to screen that one", untrusted.Escape(dir), untrusted.Escape(out.Target))
	}
	if err != nil || real == abs {
		// Nothing to resolve, or nothing there: read it as named (messages name it so).
		return abs, nil
	}
	return real, nil
}

func (d *dedup) entries(_ context.Context, r *engine.Run) error {
	s := r.Spec.Settings
	// dir is where the files are read; d.opts.Dir stays as the caller named it, for messages.
	dir, err := ConfineDir(d.opts.Root, d.opts.Cwd, d.opts.Dir)
	if err != nil {
		return err
	}
	names, err := entriesNamed(dir, d.opts.Dir, s.String(packs.Glob))
	if err != nil {
		return err
	}
	if len(names) < 2 {
		return engine.BadInputf("{dir} %s has %d %s matching %q (README.md left out); dedup needs at least two to compare", d.opts.Dir, len(names), client.Plural(len(names), "entry", "entries"), s.String(packs.Glob))
	}
	limit := s.Int(packs.MaxInputBytes)
	var over []string
	for _, name := range names {
		data, err := rails.ReadTextFile(filepath.Join(dir, name), limit)
		var be *rails.BudgetError
		switch {
		case errors.As(err, &be):
			over = append(over, fmt.Sprintf("%s (%d bytes)", name, be.Size))
			continue
		case err != nil:
			var fe *rails.FileError
			if errors.As(err, &fe) {
				fe.Path = name
			}
			return err
		}
		d.texts = append(d.texts, string(data))
	}
	if len(over) > 0 {
		return &engine.OversizeError{Limit: limit, Files: over}
	}
	d.names = names
	d.dir = dir
	var read int64
	for _, t := range d.texts {
		read += int64(len(t))
	}
	r.HostWork(HostWork(read, engine.HostParams(r.Spec.Settings)))
	r.Emit(engine.EntriesEvent{Dir: d.opts.Dir, Files: len(names)})
	return nil
}

func (d *dedup) embed(ctx context.Context, r *engine.Run) error {
	if d.lexical {
		return nil
	}
	s := r.Spec.Settings
	model := s.String(packs.EmbedModel)
	var cache VectorCache
	var key client.EmbeddingKey
	if !d.opts.NoCache && d.opts.Cache.Path != "" {
		cache = d.opts.Cache
		key = r.Client.EmbeddingKey(ctx, model)
		r.Emit(engine.CacheEvent{Server: string(key.Kind), Endpoint: key.Endpoint, Model: key.Model, Digest: key.Digest, File: cache.Path})
	}
	start := time.Now()
	// The texts' hashes key the cache and, with the names, the folder's screen: only a cache
	// needs them.
	var hashes [][32]byte
	if cache.Path != "" {
		hashes = make([][32]byte, len(d.texts))
		for i, text := range d.texts {
			hashes[i] = TextHash(text)
		}
	}
	d.hashes = hashes
	d.vectors = make([][]float32, len(d.texts))
	got, stale, err := cache.Lookup(key, hashes)
	copy(d.vectors, got)
	if err != nil {
		d.cacheProblem(r, err)
		cache = VectorCache{}
	}
	var missing []int
	for i, v := range d.vectors {
		if v != nil {
			d.result.Cached++
			continue
		}
		missing = append(missing, i)
	}
	d.cache, d.key = cache, key
	batch := int(s.Int(packs.BatchSize))
	start0 := time.Now()
	var added []Entry
	// What was fetched is stored even when a later batch fails: the next run asks only for the rest.
	defer func() {
		// What getting the vectors took, without storing them: exact scoring weighs against it.
		d.embedTime = time.Since(start)
		if cache.Path == "" {
			return
		}
		evicted, err := cache.Store(key, added, stale)
		if err != nil {
			d.cacheProblem(r, err)
		}
		if evicted > 0 {
			r.Emit(engine.CacheEvictedEvent{Vectors: evicted, MaxBytes: cache.MaxBytes})
		}
	}()
	for start := 0; start < len(missing); start += batch {
		idx := missing[start:min(start+batch, len(missing))]
		inputs := make([]string, len(idx))
		for k, i := range idx {
			inputs[k] = d.texts[i]
		}
		r.Observe(engine.ProgressEvent{Stage: engine.StageEmbed, Step: "embed", Done: start, Total: len(missing), Elapsed: time.Since(start0)})
		vectors, err := embedBatch(ctx, r, model, inputs)
		var tooLong *client.EmbedInputTooLongError
		switch {
		case errors.As(err, &tooLong):
			// The server does not say which input was too long: each is asked for alone, and
			// one too long for the model is embedded in pieces.
			if err := d.embedEach(ctx, r, model, idx); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			for k, i := range idx {
				d.vectors[i] = vectors[k]
			}
		}
		if cache.Path != "" {
			for _, i := range idx {
				added = append(added, Entry{Hash: hashes[i], Vector: d.vectors[i]})
			}
		}
	}
	// The vectors and hashes stand for the texts from here on.
	d.texts = nil
	// Vectors from the cache and from the server must agree in length too.
	for i := range d.vectors {
		if len(d.vectors[i]) != len(d.vectors[0]) {
			return &client.BadEmbeddingError{Reason: fmt.Sprintf("%s has a vector of length %d, %s of %d", d.names[i], len(d.vectors[i]), d.names[0], len(d.vectors[0])), MaybeStaleCache: true}
		}
	}
	return nil
}

// lexicalScreens keys, in the embedding cache, the lexical screens a folder had: no embedding
// key has an empty server kind and endpoint.
var lexicalScreens = client.EmbeddingKey{Model: "lexical"}

// seenLexical says the folder's entries are the ones its last lexical screen at this threshold
// found, and keeps this screen's for the next: only the entries, since a lexical screen is cheap
// to score again and what a repeat changes is what it saved the host.
func (d *dedup) seenLexical(r *engine.Run, threshold float64) bool {
	c := d.opts.Cache
	if d.opts.NoCache || c.Path == "" {
		return false
	}
	ids := make([][32]byte, len(d.names))
	for i := range d.names {
		ids[i] = EntryID(d.names[i], TextHash(d.texts[i]))
	}
	sid := screenID(d.dir, threshold, "lexical")
	prev, err := c.LoadScreen(lexicalScreens, sid)
	if err != nil {
		d.cacheProblem(r, err)
		return false
	}
	if err := c.StoreScreen(lexicalScreens, sid, &Screen{Entries: ids}); err != nil {
		d.cacheProblem(r, err)
	}
	return prev != nil && slices.Equal(prev.Entries, ids)
}

// cacheProblem records a cache that failed: the run goes on without it, and says so.
func (d *dedup) cacheProblem(r *engine.Run, err error) {
	if d.result.CacheProblem == "" {
		d.result.CacheProblem = err.Error()
	}
	r.Emit(engine.CacheErrorEvent{Error: err.Error()})
}

// threshold is the screen's threshold: the one set, else the method's default.
func threshold(s *packs.Settings, lexical bool) float64 {
	switch {
	case s.String(packs.Threshold) != "":
		return s.Float(packs.Threshold)
	case lexical:
		return DefaultJaccard
	}
	return DefaultCosine
}

func (d *dedup) score(_ context.Context, r *engine.Run) error {
	r.Observe(engine.ProgressEvent{Stage: engine.StageScore, Step: "score", Total: len(d.names)})
	threshold := threshold(r.Spec.Settings, d.lexical)
	set := &pairSet{}
	switch {
	case !d.opts.Pairs:
		set.limit = JournalPairs
		set.group = newGrouper(len(d.names))
	case d.opts.Keep > 0:
		set.limit = max(d.opts.Keep, JournalPairs)
	}
	method := "exact"
	var separation *Separation
	var plan *reuse
	unchanged := false
	if d.lexical {
		method = "lexical"
		unchanged = d.seenLexical(r, threshold)
		entries := LexicalEntries(d.texts)
		d.texts = nil
		lexicalPairs(entries, d.names, threshold, set)
	} else {
		u := NormalizeInPlace(d.vectors)
		separation = u.Separation(threshold)
		exact := r.Spec.Settings.String(packs.Exact)
		var ids [][32]byte
		var sid []byte
		if d.cache.Path != "" {
			ids = make([][32]byte, len(d.names))
			for i := range d.names {
				ids[i] = EntryID(d.names[i], d.hashes[i])
			}
			sid = screenID(d.dir, threshold, exact)
			prev, err := d.cache.LoadScreen(d.key, sid)
			if err != nil {
				d.cacheProblem(r, err)
			}
			plan = planReuse(prev, ids)
			// A cache that could not be read now is not waited for again to write.
			set.record = err == nil
		}
		_, cheaper := planLSH(len(d.names), threshold)
		switch {
		case plan != nil:
			method = plan.prev.Method
			d.result.Reused = len(d.names) - len(plan.changed)
			reusedPairs(u, d.names, threshold, plan, set)
		case cheaper && (exact == "false" || exact == "auto" && u.ExactEstimate() > d.embedTime):
			method = "lsh"
			approximatePairs(u, d.names, threshold, set)
		default:
			similarPairs(u, d.names, threshold, set)
		}
		if set.record && !set.overflow {
			if err := d.cache.StoreScreen(d.key, sid, &Screen{Method: method, Entries: ids, Pairs: set.recorded}); err != nil {
				d.cacheProblem(r, err)
			}
		}
		set.recorded = nil
	}
	total := set.total
	pairs := set.sorted()
	var groups []Group
	if set.group != nil {
		groups = set.group.groups(d.names)
	}
	*d.result = Result{Files: d.names, Groups: groups, Pairs: pairs, Total: total, Threshold: threshold, Cached: d.result.Cached, Fitted: d.result.Fitted, Method: method, Why: d.result.Why, Picked: d.result.Picked, Separation: separation, CacheProblem: d.result.CacheProblem, Reused: d.result.Reused}
	if pairs == nil {
		pairs = []Pair{}
	}
	details := &Details{Method: method, Dir: d.opts.Dir, Files: len(d.names), Threshold: threshold, Separation: separation,
		Cached: d.result.Cached, Fitted: d.result.Fitted, Reused: d.result.Reused, total: total}
	if set.group != nil {
		if groups == nil {
			groups = []Group{}
		}
		details.Groups, details.PairsTotal, details.top = groups, &total, pairs
	} else {
		details.Pairs = pairs
	}
	if unchanged || plan != nil && len(plan.changed) == 0 {
		// The folder is as the last screen found it: the host has this answer already, so the
		// screen saves it nothing new.
		r.HostWork(engine.HostWork{Turns: cost.Turns{Delegated: 1}})
		details.UnchangedSince = "the last screen"
	}
	r.SetDetails(details)
	r.Emit(engine.ScoredEvent{Files: len(d.names), Pairs: total, Groups: len(groups), Cached: d.result.Cached, Reused: d.result.Reused, Method: method})
	return nil
}
