package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/analyze"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/dedup"
)

func (e *env) cacheCommand() *cli.Command {
	return &cli.Command{
		Name:     "cache",
		Category: groupInspect,
		Usage:    "show or prune the embedding cache dedup keeps",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum cache show",
			"locum cache prune --older-than 30d",
		}}),
		UsageText: "locum cache show [--json] | prune [--older-than 30d] [--max-size 512MB] [--all] [--json]",
		Description: "dedup keeps every vector it fetched in one file, embeddings.db in locum's folder of the user\n" +
			"cache directory ($XDG_CACHE_HOME/locum, else ~/.cache/locum), keyed by server kind, endpoint,\n" +
			"model, the model's digest where the server reports one, and the text's SHA-256. It is shared\n" +
			"by every repository and never kept inside one.",
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unknown cache command %q", cmd.Args().First())
			}
			return usagef(cmd, "missing cache command (show or prune)")
		},
		Commands: []*cli.Command{
			{
				Name:         "show",
				Usage:        "the cache's file, its size, and its vectors per server and model",
				UsageText:    "locum cache show [--json]",
				Metadata:     helpOf(commandHelp{examples: []string{"locum cache show", "locum cache show --json"}}),
				Flags:        []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout"}},
				OnUsageError: onUsageError,
				Action:       e.cacheShow,
			},
			{
				Name:  "prune",
				Usage: "remove vectors by age, then the least recently used past a size, and compact the file",
				UsageText: "locum cache prune [--older-than 30d] [--max-size 512MB] [--json]\n" +
					"locum cache prune --all [--json]",
				Description: "With no flag, prune removes the least recently used vectors past the cache's cap (the\n" +
					"cache_max_mib setting, LOCUM_CACHE_MAX_MIB) and compacts the file: a run evicts past the\n" +
					"cap as well, but only a prune gives the disk its free pages back.",
				Metadata: helpOf(commandHelp{examples: []string{
					"locum cache prune",
					"locum cache prune --older-than 30d --max-size 512MB",
					"locum cache prune --all --json",
				}}),
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "older-than", Usage: "remove vectors last used longer ago than this (30d, 2w)"},
					&cli.StringFlag{Name: "max-size", Usage: "then remove the least recently used until the data takes at most this much (512MB)", DefaultText: "the cache's cap"},
					&cli.BoolFlag{Name: "all", Usage: "remove the whole file"},
					&cli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout"},
				},
				OnUsageError: onUsageError,
				Action:       e.cachePrune,
			},
		},
	}
}

// vectorCache is the operator's embedding cache, with the cap its settings give it.
func (e *env) vectorCache() (dedup.VectorCache, error) {
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return dedup.VectorCache{}, withCode(exitCouldNot, fmt.Errorf("locum cache: %w", err))
	}
	p, err := packs.LoadBuiltin(packs.DefaultPack)
	if err != nil {
		return dedup.VectorCache{}, err
	}
	// The cap is the operator's alone, so no repository's pack or workspace is read for it.
	s, err := (&packs.Composition{Packs: []*packs.Pack{p}}).Resolve(dedup.Mode.Name, e.lookup, nil)
	if err != nil {
		return dedup.VectorCache{}, withCode(exitCouldNot, fmt.Errorf("locum cache: %w", err))
	}
	return dedup.VectorCache{Path: filepath.Join(dirs.Cache, dedup.CacheFileName), MaxBytes: s.Int(packs.CacheMaxMiB) << 20}, nil
}

func (e *env) cacheShow(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	}
	c, err := e.vectorCache()
	if err != nil {
		return err
	}
	st, err := c.Stats()
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum cache show: %w", err))
	}
	if cmd.Bool("json") {
		return writeJSON(e.stdout, st)
	}
	fmt.Fprintf(e.stdout, "cache %s: %d vectors, %s in a file of %s (cap %s)\n", esc(st.Path), st.Vectors, mib(st.Bytes), mib(st.FileBytes), mib(c.MaxBytes))
	for _, m := range st.Models {
		digest := ""
		if m.Digest != "" {
			digest = " digest=" + esc(m.Digest)
		}
		fmt.Fprintf(e.stdout, "  %d vectors, %d %s  last used %s  server=%s endpoint=%s model=%s%s\n", m.Vectors, m.Screens, client.Plural(m.Screens, "screen", "screens"),
			m.LastUsed, esc(m.Server), esc(m.Endpoint), esc(m.Model), digest)
	}
	return nil
}

func (e *env) cachePrune(_ context.Context, cmd *cli.Command) error {
	if cmd.NArg() > 0 {
		return usagef(cmd, "unexpected argument %q", cmd.Args().First())
	}
	c, err := e.vectorCache()
	if err != nil {
		return err
	}
	opts := dedup.PruneOptions{All: cmd.Bool("all"), MaxBytes: c.MaxBytes}
	if opts.All && (cmd.IsSet("older-than") || cmd.IsSet("max-size")) {
		return usagef(cmd, "--all removes everything: give it alone")
	}
	if s := cmd.String("older-than"); s != "" {
		if opts.OlderThan, err = analyze.ParseAge(s); err != nil {
			return usagef(cmd, "--older-than: %v", err)
		}
	}
	if s := cmd.String("max-size"); s != "" {
		if opts.MaxBytes, err = analyze.ParseSize(s); err != nil {
			return usagef(cmd, "--max-size: %v", err)
		}
	}
	start := time.Now()
	rep, err := c.Prune(opts)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum cache prune: %w", err))
	}
	if cmd.Bool("json") {
		return writeJSON(e.stdout, rep)
	}
	if opts.All {
		fmt.Fprintf(e.stdout, "removed %s: %d vectors, %s\n", esc(c.Path), rep.Removed, mib(rep.BytesBefore))
		return nil
	}
	fmt.Fprintf(e.stdout, "pruned %d vectors; %d stay in %s, %s (was %s) in %s\n", rep.Removed, rep.Kept, esc(c.Path),
		mib(rep.BytesAfter), mib(rep.BytesBefore), time.Since(start).Round(time.Millisecond))
	return nil
}

// mib is a size as a person reads it.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
