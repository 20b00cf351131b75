package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func runsListFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "mode", Usage: "only runs of this mode (transform, summarize, dedup, eval, agent)"},
		&cli.StringFlag{Name: "since", Usage: "only runs started since: a duration back from now (90m, 24h, 7d), a date (2026-11-30) or a time"},
		&cli.BoolFlag{Name: "failed", Usage: "only runs that did not end OK (RED, REFUSED, ERROR, or no end at all)"},
		&cli.BoolFlag{Name: "json", Usage: "print the runs as one JSON object on stdout"},
	}
}

// runJSON is one run of `runs list --json`.
type runJSON struct {
	ID      string  `json:"run_id"`
	Start   *string `json:"start"`
	Mode    *string `json:"mode"`
	Model   *string `json:"model"`
	Status  string  `json:"status"`
	Receipt *string `json:"receipt"`
	Journal string  `json:"journal"`
	// Sealed says locum can show it wrote the journal: only a sealed one counts in the ledger.
	Sealed bool `json:"sealed"`
}

func (e *env) runsList(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	}
	if m := cmd.String("mode"); m != "" && !slices.Contains(packs.Modes, m) {
		return usagef(cmd, "--mode %q: want one of %s", m, strings.Join(packs.Modes, ", "))
	}
	filter := engine.RunFilter{Mode: cmd.String("mode"), Failed: cmd.Bool("failed")}
	if s := cmd.String("since"); s != "" {
		since, err := engine.ParseSince(s, time.Now())
		if err != nil {
			return usagef(cmd, "%v", err)
		}
		filter.Since = since
	}
	dir, err := e.runsDir()
	if err != nil {
		return err
	}
	all, err := engine.ListRuns(dir, e.journalKey())
	if err != nil {
		return err
	}
	var runs []engine.RunSummary
	for _, r := range all {
		if filter.Keep(r) {
			runs = append(runs, r)
		}
	}
	if cmd.Bool("json") {
		out := struct {
			Dir  string    `json:"dir"`
			Runs []runJSON `json:"runs"`
		}{Dir: dir, Runs: []runJSON{}}
		for _, r := range runs {
			j := runJSON{ID: r.ID, Mode: nilIfEmpty(r.Mode), Model: nilIfEmpty(r.Model), Status: r.Status, Receipt: nilIfEmpty(r.Receipt), Journal: r.Path, Sealed: r.Sealed}
			if !r.Start.IsZero() {
				j.Start = nilIfEmpty(r.Start.UTC().Format(time.RFC3339Nano))
			}
			out.Runs = append(out.Runs, j)
		}
		return e.printJSON(out)
	}
	if len(runs) == 0 {
		if len(all) > 0 {
			fmt.Fprintf(e.stdout, "no runs in %s match (%s in all)\n", untrusted.Escape(dir), client.Count(len(all), "run", "runs"))
			return nil
		}
		fmt.Fprintf(e.stdout, "no runs in %s\n", untrusted.Escape(dir))
		return nil
	}
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tMODE\tSTATUS\tMODEL")
	unsealed := 0
	for _, r := range runs {
		mark := ""
		if !r.Sealed {
			mark, unsealed = "\tunsealed", unsealed+1
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s%s\n", untrusted.Escape(r.ID), untrusted.Escape(orDash(r.Mode)), untrusted.Escape(r.Status), untrusted.Escape(orDash(r.Model)), mark)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if unsealed > 0 {
		fmt.Fprintln(e.stdout, "unsealed: locum cannot show it wrote these journals, so the ledger and the break-even do not count them (locum runs show says why)")
	}
	return nil
}

func nilIfEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// printJSON prints v as one JSON object on stdout. encoding/json escapes every control
// character, so text from a journal or a pack cannot reach the terminal raw.
func (e *env) printJSON(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s\n", data)
	return nil
}
