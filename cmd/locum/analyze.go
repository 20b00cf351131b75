package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/analyze"
	"github.com/locumdev/locum/runner/engine"
)

// analyzeCommands are the runs subcommands that read journals back as a whole: analyze, diff
// and prune.
func (e *env) analyzeCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:  "analyze",
			Usage: "where a run failed, whether it recovered, what its verify did not see, and a health word",
			UsageText: "locum runs analyze RUN_ID [--json]\n" +
				"locum runs analyze --all [--since 7d|2026-11-01] [--mode M] [--json]",
			Description: "For each run: the primary failure stage (the first step that went wrong), the final stage,\n" +
				"whether a later attempt recovered it, the verification gap (files the run changed that the\n" +
				"verify command neither named nor ran a test for, where its text tells), and good, warning or\n" +
				"risky with the reasons. --all adds a table per model and mode.",
			Metadata: helpOf(commandHelp{
				examples: []string{
					"locum runs analyze 20261204T201530Z-5c1f0e",
					"locum runs analyze --all --since 7d --mode transform",
					"locum runs analyze --all --json",
				},
				exits: exitWords{done: "analysed, whatever the health"},
			}),
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "all", Usage: "analyse every run in the journal folder"},
				&cli.StringFlag{Name: "since", Usage: "with --all: runs started within this age (7d, 36h) or since this date (2026-11-01)"},
				&cli.StringFlag{Name: "mode", Usage: "with --all: runs of this mode only"},
				&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout"},
			},
			OnUsageError: onUsageError,
			Action:       e.runsAnalyze,
		},
		{
			Name:      "diff",
			Usage:     "two runs side by side: settings, prompts' hashes, reply classes, attempts, verdicts",
			UsageText: "locum runs diff RUN_A RUN_B [--changed] [--json]",
			Metadata: helpOf(commandHelp{examples: []string{
				"locum runs diff 20261204T201530Z-5c1f0e 20261204T203012Z-a1b2c3",
				"locum runs diff 20261204T2015 20261204T2030 --changed",
			}}),
			OnUsageError: onUsageError,
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "changed", Usage: "show only the rows where the runs differ"},
				&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout"},
			},
			Action: e.runsDiff,
		},
		{
			Name:  "prune",
			Usage: "remove old run journals: by age, then the oldest until the rest fit a size",
			UsageText: "locum runs prune --older-than 30d [--max-size 100MB] [--dry-run] [--json]\n" +
				"locum runs prune --max-size 100MB [--dry-run] [--json]",
			Description: "Only regular *.jsonl files whose first line is a run_start event are removed; the newest\n" +
				"journal is never removed for size, since it may be a run in progress.",
			Metadata: helpOf(commandHelp{examples: []string{
				"locum runs prune --older-than 30d --dry-run",
				"locum runs prune --older-than 30d --max-size 100MB",
				"locum runs prune --max-size 100MB --json",
			}}),
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "older-than", Usage: "remove journals of runs started longer ago than this (30d, 2w, 36h)"},
				&cli.StringFlag{Name: "max-size", Usage: "then remove the oldest until the journals take at most this much (100MB)"},
				&cli.BoolFlag{Name: "dry-run", Usage: "say what would be removed, remove nothing"},
				&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout"},
			},
			OnUsageError: onUsageError,
			Action:       e.runsPrune,
		},
	}
}

func (e *env) runsAnalyze(_ context.Context, cmd *cli.Command) error {
	all := cmd.Bool("all")
	switch {
	case all && cmd.NArg() > 0:
		return usagef(cmd, "give a RUN_ID or --all, not both")
	case !all && cmd.NArg() != 1:
		return usagef(cmd, "want one RUN_ID, or --all")
	case !all && (cmd.IsSet("since") || cmd.IsSet("mode")):
		return usagef(cmd, "--since and --mode go with --all")
	}
	var filter analyze.Filter
	if s := cmd.String("since"); s != "" {
		t, err := analyze.ParseSince(s, time.Now())
		if err != nil {
			return usagef(cmd, "--since: %v", err)
		}
		filter.Since = t
	}
	filter.Mode = cmd.String("mode")
	dir, err := e.runsDir()
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	// A handoff whose use no journal records is measured on the repository's files as they stand.
	filter.Root, _ = e.root()
	if !all {
		j, err := engine.LoadRun(dir, cmd.Args().First(), e.journalKey())
		if err != nil {
			return withCode(exitCouldNot, fmt.Errorf("locum runs analyze: %w", err))
		}
		r := analyze.AnalyzeJournal(strings.TrimSuffix(filepath.Base(j.Path), ".jsonl"), j)
		r.MeasureHandoff(filter.Root)
		if cmd.Bool("json") {
			return writeJSON(e.stdout, r)
		}
		printRun(e.stdout, r)
		return nil
	}
	runs, unreadable, err := analyze.Dir(dir, e.journalKey(), filter)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum runs analyze: %w", err))
	}
	if runs == nil {
		runs = []analyze.Run{}
	}
	groups := analyze.Summarize(runs)
	if unreadable > 0 {
		fmt.Fprintf(e.stderr, "locum runs analyze: warning: %d file(s) in %s are not readable run journals; left out\n", unreadable, dir)
	}
	if cmd.Bool("json") {
		return writeJSON(e.stdout, struct {
			Runs   []analyze.Run   `json:"runs"`
			Groups []analyze.Group `json:"groups"`
		}{runs, groups})
	}
	if len(runs) == 0 {
		fmt.Fprintf(e.stdout, "no runs to analyse in %s\n", dir)
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tMODE\tMODEL\tSTATUS\tPRIMARY\tFINAL\tRECOVERED\tGAP\tHEALTH")
	for _, r := range runs {
		mark := ""
		if r.Unsealed {
			mark = "\tunsealed"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s%s\n", esc(r.ID), esc(orDash(r.Mode)), esc(orDash(r.Model)), esc(r.Status),
			esc(r.Primary), esc(r.Final), yesNo(r.Recovered), esc(r.Gap.State), r.Health, mark)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "MODEL\tMODE\tRUNS\tKEPT\tRED\tNOT RUN\tTOP FAILURE STAGES\tMEDIAN TTFT\tMEDIAN RATE\tTOKENS/KEPT\tHANDOFFS")
	for _, g := range groups {
		var top []string
		for _, s := range g.TopStages {
			top = append(top, fmt.Sprintf("%s %d", esc(s.Stage), s.Runs))
		}
		fmt.Fprintf(w, "%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", esc(orDash(g.Model)), esc(orDash(g.Mode)), g.Runs, g.Kept, g.Red, g.CouldNotRun+g.Unfinished,
			orDash(strings.Join(top, ", ")), msOrDash(g.MedianTTFT), rateOrDash(g.MedianRate), intOrDash(g.TokensPerKept), handoffCell(g))
	}
	return w.Flush()
}

// handoffCell is a group's handoffs in one cell: how many, their bytes, and what became of them.
func handoffCell(g analyze.Group) string {
	if g.Handoffs == 0 {
		return "-"
	}
	return fmt.Sprintf("%d (%d bytes; used %d, unused %d, unknown %d)", g.Handoffs, g.HandoffBytes, g.HandoffsUsed, g.HandoffsUnused, g.HandoffsUnknown)
}

// handoffUseWords says what became of a handoff and how that is known.
func handoffUseWords(u engine.HandoffUse) string {
	line := u.Use
	switch u.Source {
	case engine.UseMarked:
		line += " (marked)"
	case engine.UseMeasured, engine.UseMeasuredNow:
		when := "by a later run on the file"
		if u.Source == engine.UseMeasuredNow {
			when = "now"
		}
		if u.Of > 0 {
			line += fmt.Sprintf(" (measured %s: %d of %d new lines in the file)", when, u.Present, u.Of)
		} else {
			line += fmt.Sprintf(" (measured %s)", when)
		}
	}
	if u.Why != "" {
		line += ": " + esc(u.Why)
	}
	return line
}

// printRun is one run's analysis, one fact a line.
func printRun(w io.Writer, r analyze.Run) {
	fmt.Fprintf(w, "run %s  %s  %s  %s\n", esc(r.ID), esc(orDash(r.Mode)), esc(orDash(r.Model)), esc(r.Status))
	if r.Unsealed {
		fmt.Fprintf(w, "unsealed       %s\n", engine.Unsealed)
	}
	if r.Cut != "" {
		fmt.Fprintf(w, "cut            %s\n", r.Cut)
	}
	if r.Parent != "" {
		fmt.Fprintf(w, "item of        %s\n", esc(r.Parent))
	}
	fmt.Fprintf(w, "attempts       %d\n", r.Attempts)
	fmt.Fprintf(w, "primary stage  %s\n", esc(r.Primary))
	fmt.Fprintf(w, "final stage    %s\n", esc(r.Final))
	fmt.Fprintf(w, "recovered      %s\n", yesNo(r.Recovered))
	for _, f := range r.Failures {
		line := "failure        " + esc(f.Stage)
		if f.Attempt > 0 {
			line += fmt.Sprintf(" (attempt %d)", f.Attempt)
		}
		if f.Detail != "" {
			line += ": " + esc(f.Detail)
		}
		fmt.Fprintln(w, line)
	}
	gap := esc(r.Gap.State)
	if len(r.Gap.Files) > 0 {
		files := make([]string, len(r.Gap.Files))
		for i, f := range r.Gap.Files {
			files[i] = esc(f)
		}
		gap += " " + strings.Join(files, ", ")
	}
	if r.Gap.Reason != "" {
		gap += ": " + esc(r.Gap.Reason)
	}
	fmt.Fprintf(w, "verify gap     %s\n", gap)
	health := r.Health
	if len(r.Reasons) > 0 {
		reasons := make([]string, len(r.Reasons))
		for i, s := range r.Reasons {
			reasons[i] = esc(s)
		}
		health += " (" + strings.Join(reasons, ", ") + ")"
	}
	fmt.Fprintf(w, "health         %s\n", health)
	if r.Host != nil {
		p := r.Host.Parts
		fmt.Fprintf(w, "host cost      %s\n", esc(r.Host.Words()))
		fmt.Fprintf(w, "host bytes     read %d, write %d (the job itself); call %d, result %d, handoff %d, review %d (the delegation)\n", p.Read, p.Write, p.Call, p.Result, p.Handoff, p.Review)
	}
	if h := r.Handoff; h != nil {
		fmt.Fprintf(w, "handoff        %d bytes (%s): %s\n", h.Bytes, esc(h.Failure), handoffUseWords(h.HandoffUse))
	}
	for _, it := range r.Items {
		line := fmt.Sprintf("item           %s %d %s %s", esc(it.Step), it.Index, esc(it.Status), esc(it.Item))
		if it.RunID != "" {
			line += " run " + esc(it.RunID)
		}
		fmt.Fprintln(w, line)
	}
}

func (e *env) runsDiff(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() != 2 {
		return usagef(cmd, "want two run ids, got %d arguments", cmd.NArg())
	}
	dir, err := e.runsDir()
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	var ids [2]string
	var evs [2][]map[string]any
	for i := range 2 {
		path, events, err := engine.ReadRun(dir, cmd.Args().Get(i))
		if err != nil {
			return withCode(exitCouldNot, fmt.Errorf("locum runs diff: %w", err))
		}
		ids[i], evs[i] = strings.TrimSuffix(filepath.Base(path), ".jsonl"), events
	}
	d := analyze.Compare(ids[0], evs[0], ids[1], evs[1])
	if cmd.Bool("json") {
		return writeJSON(e.stdout, d)
	}
	if !d.SameTask {
		fmt.Fprintln(e.stderr, "locum runs diff: warning: the runs' tasks or files differ; this is not one task run twice")
	}
	rows := d.Rows
	if cmd.Bool("changed") {
		rows = d.Differing()
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, " \t\t%s\t%s\n", esc(d.A), esc(d.B))
	for _, r := range rows {
		mark := " "
		if !r.Same {
			mark = "*"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", mark, esc(r.Key), esc(orDash(cut(r.A))), esc(orDash(cut(r.B))))
	}
	return w.Flush()
}

func (e *env) runsPrune(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	}
	opts := analyze.PruneOptions{Now: time.Now(), DryRun: cmd.Bool("dry-run")}
	if s := cmd.String("older-than"); s != "" {
		d, err := analyze.ParseAge(s)
		if err != nil {
			return usagef(cmd, "--older-than: %v", err)
		}
		opts.OlderThan = d
	}
	if s := cmd.String("max-size"); s != "" {
		n, err := analyze.ParseSize(s)
		if err != nil {
			return usagef(cmd, "--max-size: %v", err)
		}
		opts.MaxBytes = n
	}
	if opts.OlderThan == 0 && opts.MaxBytes == 0 {
		return usagef(cmd, "say what to prune: --older-than 30d, --max-size 100MB, or both")
	}
	dir, err := e.runsDir()
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	rep, err := analyze.Prune(dir, opts)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum runs prune: %w", err))
	}
	if cmd.Bool("json") {
		return writeJSON(e.stdout, rep)
	}
	verb := "pruned"
	if opts.DryRun {
		verb = "would prune"
	}
	var bytes int64
	for _, p := range rep.Pruned {
		bytes += p.Bytes
		fmt.Fprintf(e.stdout, "%s %s (%s, %d bytes)\n", verb, esc(p.ID), p.Reason, p.Bytes)
	}
	for _, s := range rep.Skipped {
		fmt.Fprintf(e.stdout, "left %s: not a run journal\n", esc(s))
	}
	fmt.Fprintf(e.stdout, "%s %d runs (%d bytes); %d runs stay (%d bytes) in %s\n", verb, len(rep.Pruned), bytes, rep.Kept, rep.KeptBytes, dir)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// cut keeps a diff cell to one readable width.
func cut(s string) string {
	if len(s) > 80 {
		return strings.ToValidUTF8(s[:80], "") + "..."
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func msOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10) + "ms"
}

func rateOrDash(f *float64) string {
	if f == nil {
		return "-"
	}
	return strconv.FormatFloat(*f, 'f', 1, 64) + "t/s"
}

func intOrDash(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
