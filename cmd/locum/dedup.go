package main

import (
	"context"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) dedupCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "dir", Usage: "the folder whose entries to compare (required)"},
		&cli.BoolFlag{Name: "no-cache", Usage: "embed every file again instead of reusing cached embeddings"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
		&cli.BoolFlag{Name: "json", Usage: "print the pairs and figures as one JSON object on stdout"},
		&cli.IntFlag{Name: "top", Usage: "print at most this many pairs, highest first; 0 for all (default 50 on a terminal, all in a pipe or a log; --json has all)", HideDefault: true},
		&cli.StringFlag{Name: "role", Hidden: true},
	}
	flags = append(flags, settingFlags("dedup")...)
	return &cli.Command{
		Name:  "dedup",
		Usage: "screen a folder for near-duplicate entries by embedding or word similarity; it never edits a file",
		Description: "Embeds each entry (the regular files directly in --dir matching --glob, *.md by default in any\n" +
			"letter case, README.md left out) and prints each pair whose cosine similarity is at or above\n" +
			"--threshold, highest first: `0.829 0036-a.md 0038-b.md`. A pair is a candidate for a person to\n" +
			"judge, never a verdict. Embeddings are cached by server, model and content under the git directory.\n\n" +
			"--method lexical compares words instead, with no server: the score is the estimated Jaccard\n" +
			"similarity of the entries' three-word shingles (MinHash). It is the default when no embedding\n" +
			"model is configured and the server does not list the default one, or no server answers.\n\n" +
			"Exit 0 for a run, with pairs or without; 1 when a file is over --max-input-bytes (every such file\n" +
			"is named) or the endpoint is refused, before any request; 2 could not run.",
		UsageText:    "locum dedup --dir DIR [--threshold 0.8] [--method auto|embedding|lexical] [--model ID] [--glob '*.md'] [--json]",
		Flags:        flags,
		OnUsageError: e.machineUsageError,
		Action: e.machineAction(func(ctx context.Context, cmd *cli.Command) error {
			if cmd.IsSet("role") {
				return usagef(cmd, "dedup takes no --role: roles route chat models; name the embedding model with --model (or LOCUM_EMBED_MODEL)")
			}
			if cmd.String("dir") == "" {
				return usagef(cmd, "--dir is required")
			}
			if cmd.Int("top") < 0 {
				return usagef(cmd, "--top %d: want a count of pairs, or 0 for all", cmd.Int("top"))
			}
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			return e.dedup(ctx, cmd)
		}),
	}
}

func (e *env) dedup(ctx context.Context, cmd *cli.Command) error {
	p, err := e.prepare(ctx, cmd, dedup.Mode)
	if err != nil {
		return err
	}
	// Only what is printed is kept: a terminal's 50 pairs, or --top's; --json has them all.
	keep := 0
	if !cmd.Bool("json") {
		keep = e.dedupTop(cmd)
	}
	j := &dedup.Job{Dir: cmd.String("dir"), NoCache: cmd.Bool("no-cache"), Keep: keep}
	res, err := e.runJob(ctx, cmd, p, j)
	if err != nil {
		return err
	}
	found := &j.Found
	e.stopProgress()
	if res.Error == nil {
		if found.Picked != "" {
			fmt.Fprintf(e.stderr, "dedup: embedding with %s, %s; --model names another\n", untrusted.Escape(found.Picked), client.PickedEmbedSource)
		}
		if found.Why != "" {
			fmt.Fprintf(e.stderr, "dedup: comparing words, not embeddings: %s; name an embedding model with --model for a screen by meaning\n", found.Why)
		}
		shown := len(found.Pairs)
		if !cmd.Bool("json") {
			if keep > 0 {
				shown = min(shown, keep)
			}
			for _, p := range found.Pairs[:shown] {
				fmt.Fprintf(e.stdout, "%s %s %s\n", score3(p.Score), untrusted.Escape(p.A), untrusted.Escape(p.B))
			}
		}
		threshold := strconv.FormatFloat(found.Threshold, 'f', -1, 64)
		fmt.Fprintf(e.stderr, "%s at or above %s among %s (showing %d)\n", client.Count(found.Total, "pair", "pairs"), threshold, client.Count(len(found.Files), "file", "files"), shown)
		fmt.Fprintf(e.stderr, "dedup files=%d pairs=%d threshold=%s method=%s\n", len(found.Files), found.Total, threshold, found.Method)
		if !cmd.Bool("no-cache") && found.Method != "lexical" {
			fmt.Fprintf(e.stderr, "dedup cache: %d of %d embeddings came from the cache\n", found.Cached, len(found.Files))
		}
	}
	return e.finish(cmd, res)
}

// dedupTop is how many pairs to print: --top, else 50 for a person at a terminal and all for a
// pipe or a log (0 means all).
func (e *env) dedupTop(cmd *cli.Command) int {
	if cmd.IsSet("top") {
		return int(cmd.Int("top"))
	}
	if e.stdoutIsTerminal() {
		return 50
	}
	return 0
}

// score3 prints a cosine to three decimals, never as -0.000.
func score3(s float64) string {
	out := strconv.FormatFloat(s, 'f', 3, 64)
	if out == "-0.000" {
		return "0.000"
	}
	return out
}
