package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

// Row is one model's line of a bench's table.
type Row struct {
	Model string `json:"model"`
	// Weights are the model's weights as the servers that ran its cells describe them ("; "
	// between two descriptions); "" where none said.
	Weights string `json:"weights"`
	// Cells counts the model's cells; Kept those whose work its verify kept (OK), Fixed and Held
	// of them by what the verify said before the change; Red, Refused and Errors the others.
	Cells   int `json:"cells"`
	Kept    int `json:"kept"`
	Fixed   int `json:"fixed"`
	Held    int `json:"held"`
	Red     int `json:"red"`
	Refused int `json:"refused"`
	Errors  int `json:"errors"`
	// Right counts the cells an oracle found right, of Judged it judged.
	Right  int `json:"right"`
	Judged int `json:"judged"`
	// WallP50Ms and WallP90Ms are the cells' wall times at the median and the 90th percentile
	// (nearest rank), over the cells whose run began; null where none did.
	WallP50Ms *int64 `json:"wall_p50_ms"`
	WallP90Ms *int64 `json:"wall_p90_ms"`
	// TTFTms is the median time to first token and Rate the median decode rate (tokens a second),
	// over the cells whose server reported them.
	TTFTms *int64   `json:"ttft_ms"`
	Rate   *float64 `json:"rate"`
	// InTokens and OutTokens sum the tokens the servers reported; null where none did.
	InTokens  *int64 `json:"in_tokens"`
	OutTokens *int64 `json:"out_tokens"`
	// Saved sums what the host would have saved delegating each task to the model, by the
	// ledger's cost model; null where no task was a delegation.
	Saved *cost.Summary `json:"saved"`
}

// WeightsSeparator stands between two descriptions of a row's weights: the servers that ran a
// model's cells described its weights differently.
const WeightsSeparator = "; "

// Rows is a row per model, in the models' order, from the cells that ended.
func Rows(models []engine.BenchModel, cells []engine.BenchCell) []Row {
	out := []Row{}
	for _, m := range models {
		row := Row{Model: m.Model}
		var walls, ttfts []int64
		var rates []float64
		var weights []string
		for _, c := range cells {
			if c.Model != m.Model {
				continue
			}
			row.Cells++
			switch engine.Status(c.Status) {
			case engine.StatusOK:
				row.Kept++
				switch c.Shown {
				case engine.ShownFixed:
					row.Fixed++
				case engine.ShownHeld:
					row.Held++
				}
			case engine.StatusRed:
				row.Red++
			case engine.StatusRefused:
				row.Refused++
			default:
				row.Errors++
			}
			if c.Right != nil {
				row.Judged++
				if *c.Right {
					row.Right++
				}
			}
			if c.RunID != "" {
				walls = append(walls, c.WallMs)
			}
			if c.TTFTms != nil {
				ttfts = append(ttfts, *c.TTFTms)
			}
			if c.Rate != nil {
				rates = append(rates, *c.Rate)
			}
			row.InTokens = addTokens(row.InTokens, c.InTokens)
			row.OutTokens = addTokens(row.OutTokens, c.OutTokens)
			if c.Saved != nil {
				sum := *c.Saved
				if row.Saved != nil {
					sum = row.Saved.Add(sum)
				}
				row.Saved = &sum
			}
			if c.Weights != "" && !slices.Contains(weights, c.Weights) {
				weights = append(weights, c.Weights)
			}
		}
		row.WallP50Ms, row.WallP90Ms = rank(walls, 0.5), rank(walls, 0.9)
		row.TTFTms = rank(ttfts, 0.5)
		row.Rate = rank(rates, 0.5)
		row.Weights = strings.Join(weights, WeightsSeparator)
		if row.Weights == "" {
			row.Weights = m.Weights
		}
		out = append(out, row)
	}
	return out
}

func addTokens(sum, n *int64) *int64 {
	if n == nil {
		return sum
	}
	if sum == nil {
		return new(*n)
	}
	return new(cost.AddTokens(*sum, *n))
}

// rank is the p-th quantile of xs by the nearest rank (the smallest value at or above p of them);
// nil for none.
func rank[T int64 | float64](xs []T, p float64) *T {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := max(int(math.Ceil(p*float64(len(s))))-1, 0)
	return &s[i]
}

// WriteTable writes the rows as a table a person reads: aligned columns, or with markdown a
// Markdown table for a pull request. Text of a server's (a model's name, its weights) is escaped.
func WriteTable(w io.Writer, rows []Row, markdown bool) error {
	head := []string{"MODEL", "KEPT", "FIXED", "HELD", "RED", "REFUSED", "ERROR", "RIGHT", "WALL P50", "WALL P90", "TTFT", "RATE", "TOKENS IN/OUT", "SAVED", "WEIGHTS"}
	lines := [][]string{head}
	for _, r := range rows {
		lines = append(lines, []string{untrusted.Escape(r.Model), fmt.Sprintf("%d/%d", r.Kept, r.Cells), fmt.Sprint(r.Fixed), fmt.Sprint(r.Held),
			fmt.Sprint(r.Red), fmt.Sprint(r.Refused), fmt.Sprint(r.Errors), ratio(r.Right, r.Judged), millis(r.WallP50Ms), millis(r.WallP90Ms),
			millis(r.TTFTms), rate(r.Rate), tokens(r.InTokens) + "/" + tokens(r.OutTokens), saved(r.Saved), untrusted.Escape(orDash(r.Weights))})
	}
	if markdown {
		for i, l := range lines {
			cells := make([]string, len(l))
			for j, c := range l {
				cells[j] = strings.ReplaceAll(c, "|", `\|`)
			}
			if _, err := fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | ")); err != nil {
				return err
			}
			if i == 0 {
				if _, err := fmt.Fprintf(w, "|%s\n", strings.Repeat(" --- |", len(l))); err != nil {
					return err
				}
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l, "\t"))
	}
	return tw.Flush()
}

func ratio(a, b int) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%d/%d", a, b)
}

func millis(ms *int64) string {
	if ms == nil {
		return "?"
	}
	d := time.Duration(*ms) * time.Millisecond
	if d < time.Second {
		return fmt.Sprintf("%dms", *ms)
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

func rate(r *float64) string {
	if r == nil {
		return "?"
	}
	return fmt.Sprintf("%.1ft/s", *r)
}

func tokens(n *int64) string {
	if n == nil {
		return "?"
	}
	return fmt.Sprint(*n)
}

func saved(s *cost.Summary) string {
	if s == nil {
		return "-"
	}
	sign, usd := "+", s.USD
	if usd < 0 {
		sign, usd = "-", -usd
	}
	return fmt.Sprintf("%s$%.4f", sign, usd)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// outcome is the bench's one line: what it ran, the model that kept most, and what the person
// does next.
func outcome(r *engine.Result) string {
	d, ok := r.Details.(*Details)
	if !ok || len(d.Tasks) == 0 || len(d.Models) == 0 {
		return ""
	}
	line := fmt.Sprintf("bench: %d tasks on %d models, %d cells", len(d.Tasks), len(d.Models), len(d.Cells))
	switch d.Status {
	case StatusCompleted:
		best := -1
		for i, row := range d.Rows {
			if best < 0 || row.Kept > d.Rows[best].Kept || row.Kept == d.Rows[best].Kept && row.Right > d.Rows[best].Right {
				best = i
			}
		}
		if best >= 0 {
			b := d.Rows[best]
			line += fmt.Sprintf("; %s kept the most, %d of %d", untrusted.Escape(b.Model), b.Kept, b.Cells)
		}
		line += fmt.Sprintf("; locum roles accept ROLE MODEL --from-bench %s records a model's figures in its acceptance", r.RunID)
	case StatusInterrupted:
		if why := d.Resume; why != "" {
			line += "; interrupted, and it cannot be resumed: " + why
			break
		}
		line += fmt.Sprintf("; interrupted: locum bench --resume %s goes on without running its cells again", r.RunID)
	}
	return line
}
