package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/analyze"
	"github.com/locumdev/locum/runner/cost"
	"github.com/locumdev/locum/runner/ledger"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) ledgerCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "by", Value: "mode", DefaultText: "mode", Usage: "sum the runs by " + strings.Join(ledger.Bys, ", ")},
		&cli.StringFlag{Name: "since", Usage: "runs started within this age (7d, 36h) or since this date (2026-11-01)"},
		&cli.StringFlag{Name: "mode", Usage: "runs of this mode only"},
		&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout (the MCP ledger tool returns the same)"},
	}
	for _, f := range settingFlags("") {
		if strings.HasPrefix(f.Names()[0], "host-") {
			flags = append(flags, f)
		}
	}
	flags = append(flags, declareFlags(packs.LedgerFlags(), nil)...)
	return &cli.Command{
		Name:     "ledger",
		Category: groupReview,
		Usage:    "what delegation saved or cost the host: runs, keep rate, host tokens net of losses, money, local time",
		UsageText: "locum ledger [--by model|mode|role|week] [--since 7d|2026-11-01] [--mode M] [--json]\n" +
			"locum ledger --host-price-in 3 --host-price-out 15 --host-price-cached 0.3\n" +
			"locum ledger --host-transcripts ~/.claude/projects",
		Description: "Sums the run journals of this repository that locum sealed with your key; a journal it cannot\n" +
			"show it wrote (one a repository brought along, or from before journals were sealed) is not\n" +
			"counted, and the ledger says how many were not. For each run, the host's cost of doing the job\n" +
			"itself (reading the span, the file or the folder; writing the edit) against what the delegation\n" +
			"cost it (the call, the result, the review), estimated from byte counts at --host-bytes-per-token,\n" +
			"over the turns the host had left (each re-reads what entered its context at the cached price).\n" +
			"A run not kept saved nothing: its call and result are a loss. Money shows when you set a price;\n" +
			"the break-even of each mode and role follows the table. Every figure says how it was reached.\n" +
			"With --host-transcripts (LOCUM_HOST_TRANSCRIPTS, or host.transcripts in your user config) naming the\n" +
			"folder of the host's own session transcripts, each run is joined to the host's requests that made\n" +
			"its call and read its result, and their usage shows beside the estimate, measured; only you name it.",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum ledger --since 7d",
			"locum ledger --by role --host-price-in 3 --host-price-out 15 --host-price-cached 0.3",
			"locum ledger --host-transcripts ~/.claude/projects --json",
		}}),
		Flags:        flags,
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			return e.ledger(cmd)
		},
	}
}

func (e *env) ledger(cmd *cli.Command) error {
	if by := cmd.String("by"); !slices.Contains(ledger.Bys, by) {
		return usagef(cmd, "--by %s: want one of %s", by, strings.Join(ledger.Bys, ", "))
	}
	f := ledger.Filter{Mode: cmd.String("mode")}
	if s := cmd.String("since"); s != "" {
		t, err := analyze.ParseSince(s, time.Now())
		if err != nil {
			return usagef(cmd, "--since: %v", err)
		}
		f.Since = t
	}
	given := setFlags(cmd, "")
	maps.Copy(given, givenFlags(cmd, packs.LedgerFlags()))
	jobs, err := e.jobs(given)
	if err != nil {
		return err
	}
	res, err := jobs.Ledger(job.LedgerRequest{Filter: f, By: cmd.String("by")})
	var unread *job.WorkspaceError
	var noJournals *job.JournalsError
	switch {
	case errors.As(err, &unread), errors.As(err, &noJournals):
		return withCode(exitCouldNot, err)
	case err != nil:
		return withCode(exitCouldNot, fmt.Errorf("locum ledger: %w", err))
	}
	rep := res.Report
	if rep.Unreadable > 0 {
		fmt.Fprintf(e.stderr, "locum ledger: warning: %d file(s) in %s are not readable run journals; left out\n", rep.Unreadable, res.Dir)
	}
	if res.NoDirect != nil {
		fmt.Fprintf(e.stderr, "locum ledger: warning: no measured direct cost: %s\n", untrusted.Escape(res.NoDirect.Error()))
	}
	if cmd.Bool("json") {
		return writeJSON(e.stdout, rep)
	}
	return printLedger(e.stdout, rep)
}

// printLedger is the ledger as a table, the totals, the method of each figure and the
// break-even rules.
func printLedger(out io.Writer, rep ledger.Report) error {
	refused := rep.Total.CostRefusals > 0
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	head := []string{strings.ToUpper(rep.By), "RUNS", "KEPT", "KEEP", "RIGHT"}
	if refused {
		head = append(head, "REFUSED FOR COST")
	}
	head = append(head, "TURNS", "SAVED IN", "SAVED OUT", "CARRIED", "NET TOKENS", "USD")
	measured := rep.Host != nil
	if measured {
		head = append(head, "JOINED", "MEASURED TURN TOKENS", "MEASURED TURN USD", "MEASURED C")
	}
	head = append(head, "LOCAL TIME", "")
	// Every cell ends in a tab, the last too, so that tabwriter aligns it.
	fmt.Fprintln(w, strings.Join(head, "\t")+"\t")
	for _, r := range append(rep.Rows, rep.Total) {
		cells := []string{esc(r.Key), fmt.Sprint(r.Runs), fmt.Sprint(r.Kept), percent(r.KeepRate), rightRate(r)}
		if refused {
			cells = append(cells, fmt.Sprint(r.CostRefusals))
		}
		cells = append(cells, signed(r.TurnsSaved), signed(r.Saved.In), signed(r.Saved.Out), signed(r.Carried), signed(r.Net), cost.Money(r.USD))
		if measured {
			cells = append(cells, hostCells(r.Host)...)
		}
		// The verdict is the money's: the terms are tokens at different prices.
		verdict := "saved"
		if r.USD < 0 {
			verdict = "loss"
		}
		if r.Costed == 0 {
			verdict = "-"
		}
		cells = append(cells, (time.Duration(r.LocalMs) * time.Millisecond).Round(time.Second).String(), verdict)
		fmt.Fprintln(w, strings.Join(cells, "\t")+"\t")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nruns: %s\n", rep.Method.Runs)
	fmt.Fprintf(out, "turns: %s\n", rep.Method.Turns)
	fmt.Fprintf(out, "tokens: %s\n", rep.Method.Tokens)
	fmt.Fprintf(out, "money: %s\n", rep.Method.Money)
	if n := rep.Total.UsageErrors; n > 0 {
		fmt.Fprintf(out, "%d usage %s (a file, range or symbol that does not exist) refused before any work %s not counted as runs\n", n, plural(n, "error", "errors"), plural(n, "is", "are"))
	}
	if rep.Discounted > 0 {
		fmt.Fprintf(out, "%d kept run(s) nobody judged are weighed by their role's right rate\n", rep.Discounted)
	}
	fmt.Fprintf(out, "local time: %s\n", rep.Method.LocalMs)
	if w := rep.Total.StrengthWords(); w != "" {
		fmt.Fprintf(out, "verify strength: %s\n", w)
	}
	if t := rep.Total; t.Handoffs > 0 {
		fmt.Fprintf(out, "handoffs: %d red %s handed the host the attempt that came closest, %d bytes in all, counted in what the delegation cost it; used %d, unused %d, unknown %d\n",
			t.Handoffs, plural(t.Handoffs, "run", "runs"), t.HandoffBytes, t.HandoffsUsed, t.HandoffsUnused, t.HandoffsUnknown)
		fmt.Fprintf(out, "handoff use: %s\n", rep.Method.Handoffs)
	}
	st := rep.Standing
	fmt.Fprintf(out, "standing: %s: locum's MCP tool list and instructions, %d bytes (%d tokens), cost a host that installed them %s a turn at the cached price, delegating or not\n",
		st.Method, st.Bytes, st.Tokens, moneyPerTurn(st.USD))
	if measured {
		printHost(out, rep.Host)
	}
	if rep.Uncosted > 0 {
		fmt.Fprintf(out, "%d run(s) recorded no host cost (older journals): counted in runs, not in tokens\n", rep.Uncosted)
	}
	if rep.Unsealed > 0 || rep.Measurements > 0 {
		fmt.Fprintln(out, ledger.Left{Unsealed: rep.Unsealed, Measurements: rep.Measurements}.Words())
	}
	if d := rep.Direct; d != nil {
		fmt.Fprintf(out, "direct cost: measured by the host arm of %s, a fresh session doing one task alone (its own start included):\n", esc(d.Record))
		for _, role := range slices.Sorted(maps.Keys(d.Roles)) {
			c := d.Roles[role]
			fmt.Fprintf(out, "  role %s: %.1f turns, %.0f tokens, %s a task (the mean of %d samples)\n", esc(role), c.Turns, c.Tokens, cost.Money(c.USD), c.Samples)
		}
	}
	fmt.Fprintln(out, "\nbreak-even:")
	for _, r := range rep.BreakEven {
		fmt.Fprintf(out, "  %s\n", esc(r.Words()))
	}
	return nil
}

func percent(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

func rightRate(r ledger.Row) string {
	if r.RightRate == nil {
		return "-"
	}
	return percent(*r.RightRate)
}

func signed(n int64) string { return fmt.Sprintf("%+d", n) }

// hostCells are a row's measured figures: the runs joined to a host call, their turns' tokens
// and money, and the median C around their calls.
func hostCells(h *ledger.RowHost) []string {
	if h == nil || h.Joined == 0 {
		return []string{"0", "-", "-", "-"}
	}
	return []string{fmt.Sprint(h.Joined), fmt.Sprint(h.Tokens), fmt.Sprintf("$%.4f", h.USD), fmt.Sprint(h.Context)}
}

// printHost says how the measured figures were reached, what the transcripts held, the standing
// cost, and what was left out.
func printHost(out io.Writer, h *ledger.HostReport) {
	fmt.Fprintf(out, "host turns: %s\n", h.Method)
	fmt.Fprintf(out, "host transcripts: %d %s, %d %s, %d %s of locum; %d %s joined, %d not (run at a terminal, or by a session not in the folder)\n",
		h.Files, plural(h.Files, "file", "files"), h.Sessions, plural(h.Sessions, "session", "sessions"), h.Calls, plural(h.Calls, "call", "calls"),
		h.Joined, plural(h.Joined, "run", "runs"), h.Unjoined)
	var left []string
	if l := h.Left.Lines; l > 0 {
		left = append(left, fmt.Sprintf("%d %s skipped (not JSON, a key named twice, or not of a transcript's shape)", l, plural(l, "line", "lines")))
	}
	if l := h.Left.LongLines; l > 0 {
		left = append(left, fmt.Sprintf("%d %s over the ceiling for one line", l, plural(l, "line", "lines")))
	}
	if l := h.Left.Files; l > 0 {
		left = append(left, fmt.Sprintf("%d %s not read (not a regular file inside the folder, or over a ceiling)", l, plural(l, "file", "files")))
	}
	if l := h.Left.Requests; l > 0 {
		left = append(left, fmt.Sprintf("%d %s past the ceiling", l, plural(l, "request", "requests")))
	}
	if len(left) > 0 {
		fmt.Fprintf(out, "host transcripts left out: %s\n", strings.Join(left, "; "))
	}
	s := h.Standing
	switch {
	case s.ToolListTokens == 0:
		fmt.Fprintln(out, "standing: not shown: the size of locum's tool list is not known")
	default:
		fmt.Fprintf(out, "standing: %s: %d %s that used locum's tools, %d requests carrying its %d-token tool list: %d tokens, %s at the cached price\n",
			cost.MethodMeasured, s.Sessions, plural(s.Sessions, "session", "sessions"), s.Requests, s.ToolListTokens, s.Tokens, strings.TrimPrefix(cost.Money(s.USD), "+"))
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// moneyPerTurn is a small sum of money a turn, to the cent's hundredth of a hundredth.
func moneyPerTurn(usd float64) string { return fmt.Sprintf("$%.6f", usd) }
