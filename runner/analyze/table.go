package analyze

import (
	"sort"
	"time"

	"github.com/locumdev/locum/runner/engine"
)

// Filter picks the runs an --all analysis covers.
type Filter struct {
	Since time.Time // zero: every run
	Mode  string    // "": every mode
	// Root is the repository the journals are of: a handoff whose use no journal records is
	// measured on its files there as they stand; "" leaves it unknown.
	Root string
}

// Keep reports whether the filter admits the run.
func (f Filter) Keep(r Run) bool {
	if f.Mode != "" && r.Mode != f.Mode {
		return false
	}
	return f.Since.IsZero() || !r.Start.Before(f.Since)
}

// StageCount is how many runs first failed at one stage.
type StageCount struct {
	Stage string `json:"stage"`
	Runs  int    `json:"runs"`
}

// Group is the runs of one model in one mode.
type Group struct {
	Model       string       `json:"model"`
	Mode        string       `json:"mode"`
	Runs        int          `json:"runs"`
	Kept        int          `json:"kept"`
	Red         int          `json:"red"`
	CouldNotRun int          `json:"could_not_run"`
	Unfinished  int          `json:"unfinished"`
	Recovered   int          `json:"recovered"`
	TopStages   []StageCount `json:"top_failure_stages"`
	MedianTTFT  *int64       `json:"median_ttft_ms"`
	MedianRate  *float64     `json:"median_rate"`
	// TokensPerKept is every token the group spent, in and out, over its kept runs: what one
	// success costs, failures included.
	TokensPerKept *int64 `json:"tokens_per_kept"`
	// Handoffs are the red runs that handed the host a handoff, HandoffBytes their bytes, and
	// the rest what became of them (engine.HandoffUseRule).
	Handoffs        int   `json:"handoffs"`
	HandoffBytes    int64 `json:"handoff_bytes"`
	HandoffsUsed    int   `json:"handoffs_used"`
	HandoffsUnused  int   `json:"handoffs_unused"`
	HandoffsUnknown int   `json:"handoffs_unknown"`
}

// topStages is how many failure stages a group lists.
const topStages = 3

// Summarize folds runs into one group per model and mode, sorted by model then mode.
func Summarize(runs []Run) []Group {
	type acc struct {
		g      Group
		stages map[string]int
		ttft   []int64
		rate   []float64
		tokens int64
		known  bool
	}
	by := map[[2]string]*acc{}
	for _, r := range runs {
		k := [2]string{r.Model, r.Mode}
		a := by[k]
		if a == nil {
			a = &acc{g: Group{Model: r.Model, Mode: r.Mode}, stages: map[string]int{}}
			by[k] = a
		}
		a.g.Runs++
		switch r.Status {
		case "OK":
			a.g.Kept++
		case "RED":
			a.g.Red++
		case StageUnfinished:
			a.g.Unfinished++
		default:
			a.g.CouldNotRun++
		}
		if r.Recovered {
			a.g.Recovered++
		}
		if h := r.Handoff; h != nil {
			a.g.Handoffs++
			a.g.HandoffBytes += h.Bytes
			switch h.Use {
			case engine.HandoffUsed:
				a.g.HandoffsUsed++
			case engine.HandoffUnused:
				a.g.HandoffsUnused++
			default:
				a.g.HandoffsUnknown++
			}
		}
		if r.Primary != StageNone {
			a.stages[r.Primary]++
		}
		if r.Figures.TTFTms != nil {
			a.ttft = append(a.ttft, *r.Figures.TTFTms)
		}
		if r.Figures.Rate != nil {
			a.rate = append(a.rate, *r.Figures.Rate)
		}
		for _, n := range []*int64{r.Figures.InTokens, r.Figures.OutTokens} {
			if n != nil {
				a.tokens += *n
				a.known = true
			}
		}
	}
	out := make([]Group, 0, len(by))
	for _, a := range by {
		g := a.g
		g.TopStages = []StageCount{}
		for s, n := range a.stages {
			g.TopStages = append(g.TopStages, StageCount{Stage: s, Runs: n})
		}
		sort.Slice(g.TopStages, func(i, j int) bool {
			if g.TopStages[i].Runs != g.TopStages[j].Runs {
				return g.TopStages[i].Runs > g.TopStages[j].Runs
			}
			return g.TopStages[i].Stage < g.TopStages[j].Stage
		})
		if len(g.TopStages) > topStages {
			g.TopStages = g.TopStages[:topStages]
		}
		if len(a.ttft) > 0 {
			sort.Slice(a.ttft, func(i, j int) bool { return a.ttft[i] < a.ttft[j] })
			m := a.ttft[len(a.ttft)/2]
			if len(a.ttft)%2 == 0 {
				m = (a.ttft[len(a.ttft)/2-1] + m) / 2
			}
			g.MedianTTFT = &m
		}
		if len(a.rate) > 0 {
			sort.Float64s(a.rate)
			m := a.rate[len(a.rate)/2]
			if len(a.rate)%2 == 0 {
				m = (a.rate[len(a.rate)/2-1] + m) / 2
			}
			g.MedianRate = &m
		}
		if g.Kept > 0 && a.known {
			t := a.tokens / int64(g.Kept)
			g.TokensPerKept = &t
		}
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Model != out[j].Model {
			return out[i].Model < out[j].Model
		}
		return out[i].Mode < out[j].Mode
	})
	return out
}
