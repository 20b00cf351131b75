package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) packsCommand() *cli.Command {
	return &cli.Command{
		Name:     "packs",
		Category: groupInspect,
		Usage:    "list, show and validate pack manifests",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum packs list",
			"locum packs show tools/local-llm",
			"locum packs validate",
		}}),
		UsageText: "locum packs list | show NAME | validate [PATH...]",
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unknown packs command %q", cmd.Args().First())
			}
			return usagef(cmd, "missing packs command (list, show or validate)")
		},
		OnUsageError: onUsageError,
		Commands: []*cli.Command{
			{
				Name:      "list",
				Usage:     "list the packs locum ships and the workspace holds, and which are composed",
				UsageText: "locum packs list [--json]",
				Metadata:  helpOf(commandHelp{examples: []string{"locum packs list", "locum packs list --json"}}),
				Flags:     []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the packs as one JSON object on stdout"}},
				Action: func(_ context.Context, cmd *cli.Command) error {
					if cmd.NArg() > 0 {
						return usagef(cmd, "unexpected argument %q", cmd.Args().First())
					}
					return e.packsList(cmd.Bool("json"))
				},
				OnUsageError: onUsageError,
			},
			{
				Name:      "show",
				Usage:     "show a pack: modes with their resolved settings and sources, roles, recipes, gates, skills",
				UsageText: "locum packs show NAME   (NAME is category/name, e.g. tools/local-llm)",
				Metadata:  helpOf(commandHelp{examples: []string{"locum packs show tools/local-llm"}}),
				Action: func(_ context.Context, cmd *cli.Command) error {
					if cmd.NArg() != 1 {
						return usagef(cmd, "want exactly one pack NAME, got %s", client.Count(cmd.NArg(), "argument", "arguments"))
					}
					return e.packsShow(cmd.Args().First())
				},
				OnUsageError: onUsageError,
			},
			{
				Name:        "validate",
				Usage:       "validate pack manifests (pack.json or a pack directory) and workspace files; with no PATH, the workspace and every pack it composes",
				Description: "Each problem prints as one line: FILE: /json/pointer: what was expected, what was found.",
				Metadata: helpOf(commandHelp{
					examples: []string{
						"locum packs validate",
						"locum packs validate .locum/packs/team/review/pack.json",
						"locum packs validate .locum/workspace.json .locum/packs/team/review",
					},
					exits: exitWords{done: "every file is valid", red: "a file is not valid", couldNot: "a file cannot be read"},
				}),
				UsageText:    "locum packs validate [PATH...]",
				Action:       func(_ context.Context, cmd *cli.Command) error { return e.packsValidate(cmd.Args().Slice()) },
				OnUsageError: onUsageError,
			},
		},
	}
}

func (e *env) packsList(asJSON bool) error {
	v, c, err := e.workspace()
	if err != nil {
		return err
	}
	type row struct{ ref, where, composed, version, summary string }
	var rows []row
	seen := map[string]bool{}
	composed := map[string]bool{}
	for _, p := range c.Packs {
		composed[p.Ref] = true
	}
	mark := func(ref string) string {
		if composed[ref] {
			return "composed"
		}
		return "-"
	}
	for _, ref := range packs.BuiltinRefs() {
		p, err := packs.LoadBuiltin(ref)
		if err != nil {
			return err
		}
		seen[ref] = true
		rows = append(rows, row{ref, "built-in", mark(ref), p.Portulan.Version, p.Summary})
	}
	local, _ := filepath.Glob(filepath.Join(c.Root, ".locum", "packs", "*", "*", "pack.json"))
	sort.Strings(local)
	for _, file := range local {
		dir := filepath.Dir(file)
		ref := filepath.Base(filepath.Dir(dir)) + "/" + filepath.Base(dir)
		if seen[ref] {
			continue
		}
		rel, _ := filepath.Rel(c.Root, file)
		p, err := packs.LoadFile(v, file, rel)
		if err != nil {
			rows = append(rows, row{ref, "workspace", mark(ref), "?", "invalid: run locum packs validate " + rel})
			continue
		}
		rows = append(rows, row{ref, "workspace", mark(ref), p.Portulan.Version, p.Summary})
	}
	if asJSON {
		type packJSON struct {
			Pack     string  `json:"pack"`
			From     string  `json:"from"`
			Composed bool    `json:"composed"`
			Version  *string `json:"version"`
			Summary  string  `json:"summary"`
		}
		out := struct {
			Packs []packJSON `json:"packs"`
		}{Packs: []packJSON{}}
		for _, r := range rows {
			out.Packs = append(out.Packs, packJSON{Pack: r.ref, From: r.where, Composed: r.composed == "composed", Version: nilIfEmpty(r.version), Summary: r.summary})
		}
		return e.printJSON(out)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACK\tFROM\tSTATE\tVERSION\tSUMMARY")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", esc(r.ref), r.where, r.composed, esc(orDash(r.version)), esc(clip(r.summary, 72)))
	}
	return tw.Flush()
}

func (e *env) packsShow(ref string) error {
	v, c, err := e.workspace()
	if err != nil {
		return err
	}
	p, ok := c.Pack(ref)
	view := c
	if !ok {
		p, err = packs.FindPack(v, c.Root, ref)
		if err != nil {
			var unknown *packs.UnknownPackError
			if errors.As(err, &unknown) {
				err = fmt.Errorf("locum packs show: %w", err)
			}
			return withCode(exitCouldNot, err)
		}
		// Settings of a pack the workspace does not compose are shown as if it were composed alone.
		view = &packs.Composition{Root: c.Root, Workspace: c.Workspace, Packs: []*packs.Pack{p}}
	}
	w := e.stdout
	fmt.Fprintf(w, "%s %s\n", esc(p.Ref), esc(orDash(p.Portulan.Version)))
	if p.Summary != "" {
		fmt.Fprintf(w, "  %s\n", esc(p.Summary))
	}
	state := "composed by this workspace"
	if !ok {
		state = "not composed by this workspace (settings shown as if composed alone)"
	}
	fmt.Fprintf(w, "manifest: %s (contract %s), %s\n", esc(p.File), esc(p.Portulan.Pack), state)

	var modes []string
	for _, m := range packs.Modes {
		if _, declared := p.Contributes.Modes[m]; declared {
			modes = append(modes, m)
		}
	}
	if len(modes) > 0 {
		fmt.Fprintln(w, "\nmodes:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, m := range modes {
			s, err := view.Resolve(m, e.lookup, nil)
			if err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum packs show: %w", err))
			}
			fmt.Fprintf(tw, "  %s\n", m)
			for _, set := range s.All() {
				fmt.Fprintf(tw, "    %s\t%s\t%s\n", set.Key, esc(orDash(set.Value)), esc(set.Source))
			}
		}
		tw.Flush()
	}
	if len(p.Contributes.Roles) > 0 {
		fmt.Fprintln(w, "\nroles:")
		names := make([]string, 0, len(p.Contributes.Roles))
		for n := range p.Contributes.Roles {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r := p.Contributes.Roles[n]
			fmt.Fprintf(w, "  %s: earned by %s, effort %s\n", esc(n), esc(strings.Join(r.Tasks, ", ")), esc(orDash(r.Effort)))
		}
	}
	if len(p.Contributes.Verify) > 0 {
		fmt.Fprintln(w, "\nrecipes:")
		for _, r := range p.Contributes.Verify {
			fmt.Fprintf(w, "  %s:%s: %s\n", esc(p.Ref), esc(r.ID), esc(r.Run))
		}
	}
	if len(p.Contributes.Gates) > 0 {
		fmt.Fprintln(w, "\ngates:")
		for _, g := range p.Contributes.Gates {
			fmt.Fprintf(w, "  %s: tier %s, action %s\n", esc(g.ID), esc(g.Tier), esc(g.ActionKind()))
		}
	}
	if len(p.Contributes.Skills) > 0 || len(p.Contributes.Personas) > 0 {
		fmt.Fprintln(w, "\nfiles:")
		for _, s := range p.Contributes.Skills {
			fmt.Fprintf(w, "  skills: %s\n", esc(s))
		}
		for _, s := range p.Contributes.Personas {
			fmt.Fprintf(w, "  persona: %s\n", esc(s))
		}
	}
	return nil
}

func (e *env) packsValidate(paths []string) error {
	v, err := e.schemas()
	if err != nil {
		return err
	}
	wd, err := e.getwd()
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return e.validateWorkspace(v, wd)
	}
	invalid, unreadable := 0, 0
	for _, p := range paths {
		err := validatePath(v, wd, p)
		if !e.report(p, err) {
			if isConfigError(err) {
				invalid++
			} else {
				unreadable++
			}
		}
	}
	return validateSummary(len(paths), invalid, unreadable)
}

// report prints ok for a valid file or its problems, and says whether it was valid.
func (e *env) report(name string, err error) bool {
	if err == nil {
		fmt.Fprintf(e.stdout, "ok %s\n", esc(name))
		return true
	}
	fmt.Fprintln(e.stderr, e.configMessage(err))
	return false
}

func isConfigError(err error) bool {
	var inv *schema.InvalidError
	var syn *schema.SyntaxError
	return errors.As(err, &inv) || errors.As(err, &syn)
}

func validateSummary(files, invalid, unreadable int) error {
	switch {
	case unreadable > 0:
		return withCode(exitCouldNot, fmt.Errorf("validate: %s, %d invalid, %d could not be read", client.Count(files, "file", "files"), invalid, unreadable))
	case invalid > 0:
		return withCode(exitRed, fmt.Errorf("validate: %s, %d invalid", client.Count(files, "file", "files"), invalid))
	}
	return nil
}

func validatePath(v *schema.Validator, wd, p string) error {
	full := p
	if !filepath.IsAbs(full) {
		full = filepath.Join(wd, p)
	}
	if filepath.Base(full) == "workspace.json" {
		data, err := untrusted.ReadFile(full, untrusted.ConfigCap)
		if fe := (*untrusted.FileError)(nil); errors.As(err, &fe) {
			fe.Path = p
		}
		if err != nil {
			return err
		}
		if err := packs.ValidateWorkspace(v, p, data); err != nil {
			return err
		}
		var ws packs.Workspace
		if err := json.Unmarshal(data, &ws); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return capsError(p, packs.CapProblems(p, &ws, nil))
	}
	pack, err := packs.LoadFile(v, full, p)
	if err != nil {
		return err
	}
	return capsError(p, packs.CapProblems(p, nil, pack))
}

// capsError is a file's settings past a repository's caps as an invalid file, or nil.
func capsError(file string, problems []schema.Problem) error {
	if len(problems) == 0 {
		return nil
	}
	return &schema.InvalidError{File: file, Problems: problems}
}

func (e *env) validateWorkspace(v *schema.Validator, wd string) error {
	root, err := packs.FindRoot(wd)
	if err != nil {
		return err
	}
	c, err := packs.Compose(v, root)
	if err != nil {
		if isConfigError(err) {
			fmt.Fprintln(e.stderr, err.Error())
			return withCode(exitRed, errors.New("validate: the workspace is invalid"))
		}
		return err
	}
	files, invalid := 0, 0
	if c.Workspace != nil {
		if !e.report(packs.WorkspaceFile, capsError(packs.WorkspaceFile, packs.CapProblems(packs.WorkspaceFile, c.Workspace, nil))) {
			invalid++
		}
		files++
	}
	for _, p := range c.Packs {
		if !e.report(p.File, capsError(p.File, packs.CapProblems(p.File, nil, p))) {
			invalid++
		}
		files++
	}
	return validateSummary(files, invalid, 0)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// esc shows a pack's or workspace's text, which whoever committed it wrote: on one line, with no
// control sequence reaching the terminal. A recipe a person reviews here must read as it runs.
func esc(s string) string { return untrusted.Escape(s) }
