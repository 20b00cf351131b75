package main

import (
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) dedupCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "dir", Usage: "the folder whose entries to compare (required)"},
		&cli.BoolFlag{Name: "pairs", Usage: "list each pair at or above the threshold, highest first, instead of joining them into groups"},
		&cli.IntFlag{Name: "top", Usage: "print at most this many groups (or pairs), largest (highest) first, 0 for all; a pipe, a log and --json get all unless it is given", DefaultText: "50"},
		&cli.BoolFlag{Name: "no-cache", Usage: "embed every file again instead of reusing cached embeddings"},
		&cli.StringFlag{Name: "role", Hidden: true},
	}
	flags = append(flags, settingFlags("dedup")...)
	flags = append(flags,
		&cli.BoolFlag{Name: "json", Usage: "print the groups (or with --pairs the pairs) and figures as one JSON object on stdout"},
		&cli.StringFlag{Name: "journal", Usage: "write the run journal to this file instead of the git directory"},
	)
	return &cli.Command{
		Name:     "dedup",
		Category: groupDelegate,
		Usage:    "screen a folder for near-duplicate entries by embedding or word similarity; it never edits a file",
		Description: "Embeds each entry (the regular files directly in --dir matching --glob in any letter case,\n" +
			"README.md left out), scores the pairs by the cosine of their vectors, and joins the pairs at or\n" +
			"above --threshold into groups, largest first, each with its members and its weakest pair:\n" +
			"`group 1: 3 files, 2 pairs, weakest 0.8290 0036-a.md 0038-b.md`. --pairs lists the pairs\n" +
			"instead, highest first. A group is a candidate for a person to judge, never a verdict.\n" +
			"Embeddings are cached in one file in your cache directory, by server, model and content;\n" +
			"`locum cache prune` trims it.\n\n" +
			"--method lexical compares words instead, with no server: the score is the Jaccard similarity of\n" +
			"the entries' three-word shingles, found by MinHash and scored exactly; a note pasted inside a\n" +
			"longer one (at least 90% of its shingles, under three times its size) scores that share and is\n" +
			"marked `(a.md inside)`. Lexical is the default when no embedding model is configured and the\n" +
			"server does not list the default one, or no server answers.",
		UsageText: "locum dedup --dir DIR [--threshold N] [--method auto|embedding|lexical] [--pairs] [--model ID] [--glob '*.md'] [--json]",
		Metadata: helpOf(commandHelp{
			examples: []string{
				`locum dedup --dir docs/adr`,
				`locum dedup --dir notes --method lexical --threshold 0.6 --pairs --top 20`,
				`locum dedup --dir notes --glob "*.txt" --model nomic-embed-text:latest --json`,
			},
			exits: exitWords{done: "a screen ran, with pairs or without", red: "a file is over --max-input-bytes (every such file is named), or the endpoint is refused, before any request"},
		}),
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
	j := &dedup.Job{Dir: cmd.String("dir"), NoCache: cmd.Bool("no-cache"), Keep: keep, Pairs: cmd.Bool("pairs")}
	found := &j.Found
	screen := func(stdout, stderr io.Writer, res *engine.Result) {
		if res.Error != nil {
			return
		}
		if found.Picked != "" {
			fmt.Fprintf(stderr, "dedup: embedding with %s, %s; --model names another\n", untrusted.Escape(found.Picked), client.PickedEmbedSource)
		}
		if found.Why != "" {
			fmt.Fprintf(stderr, "dedup: comparing words, not embeddings: %s; name an embedding model with --model for a screen by meaning\n", found.Why)
		}
		if w := found.Warning(); w != "" {
			fmt.Fprintf(stderr, "dedup: %s\n", w)
		}
		if !cmd.Bool("json") {
			for _, line := range found.Lines(keep) {
				fmt.Fprintln(stdout, line)
			}
		}
		fmt.Fprintln(stderr, found.Summary(keep))
		fmt.Fprintln(stderr, found.Figures())
		if found.Fitted > 0 {
			fmt.Fprintf(stderr, "dedup: %d of %d entries embedded in pieces, longer than the embedding model takes at once\n", found.Fitted, len(found.Files))
		}
		if !cmd.Bool("no-cache") && found.Method != "lexical" {
			if found.CacheProblem != "" {
				fmt.Fprintf(stderr, "dedup cache: not used: %s\n", untrusted.Escape(found.CacheProblem))
			}
			fmt.Fprintf(stderr, "dedup cache: %d of %d embeddings came from the cache\n", found.Cached, len(found.Files))
			switch {
			case found.Reused == len(found.Files):
				fmt.Fprintln(stderr, "dedup cache: no file changed since this folder's last screen at this threshold; its pairs came from it")
			case found.Reused > 0:
				fmt.Fprintf(stderr, "dedup cache: the pairs among %d unchanged files came from this folder's last screen; the other %d were scored against all\n", found.Reused, len(found.Files)-found.Reused)
			}
		}
	}
	res, err := e.runJob(ctx, cmd, p, j, screen)
	if err != nil {
		return err
	}
	return e.finish(cmd, res, screen)
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
