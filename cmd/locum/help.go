package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
)

func (e *env) versionCommand() *cli.Command {
	return &cli.Command{
		Name:         "version",
		Category:     groupInspect,
		Usage:        "print locum's module version and the VCS revision it was built from",
		UsageText:    "locum version",
		OnUsageError: onUsageError,
		Metadata:     helpOf(commandHelp{examples: []string{"locum version"}}),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			fmt.Fprintf(e.stdout, "locum version %s\n", fullVersion())
			return nil
		},
	}
}

func (e *env) helpCommand() *cli.Command {
	return &cli.Command{
		Name:         "help",
		Category:     groupInspect,
		Usage:        "show the help of locum or of one command; help settings lists every setting, help exit-codes the exit codes",
		UsageText:    "locum help [COMMAND [SUBCOMMAND]]\n   locum help settings\n   locum help exit-codes",
		OnUsageError: onUsageError,
		Metadata: helpOf(commandHelp{examples: []string{
			"locum help transform",
			"locum help runs show",
			"locum help settings",
		}}),
		// settings and exit-codes are no commands: they list what every command's settings and
		// exit codes are. reference writes docs/reference.
		Commands:        []*cli.Command{e.helpSettingsCommand(), e.helpExitCodesCommand(), e.helpReferenceCommand()},
		HideHelpCommand: true,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			names := cmd.Args().Slice()
			if len(names) == 0 {
				return cli.ShowRootCommandHelp(cmd.Root())
			}
			parent := cmd.Root()
			for _, name := range names[:len(names)-1] {
				sub := parent.Command(name)
				if sub == nil {
					return usagef(cmd, "no command %q", name)
				}
				parent = sub
			}
			last := names[len(names)-1]
			if parent.Command(last) == nil || last == "help" && parent == cmd.Root() {
				return usagef(cmd, "no command %q", last)
			}
			return cli.ShowCommandHelp(ctx, parent, last)
		},
	}
}

// helpSettingsCommand lists every setting once, from the table in package packs that resolves
// them, so the list is the resolver's own.
func (e *env) helpSettingsCommand() *cli.Command {
	return &cli.Command{
		Name:         "settings",
		Usage:        "list every setting: its flag, environment variable, default, values, modes and who may set it",
		UsageText:    "locum help settings",
		OnUsageError: onUsageError,
		Metadata:     helpOf(commandHelp{examples: []string{"locum help settings"}}),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			writeSettings(e.stdout, packs.SettingDocs())
			return nil
		},
	}
}

// settingsIntro says where a setting's value comes from, for help settings and its page.
const settingsIntro = "Each setting resolves from, weakest first: its default, each composed pack, the workspace\n" +
	"(.locum/workspace.json), the user config, the environment, a flag, a tool call's argument."

// writeSettings prints each setting as a block: its key, its documentation, then one labelled
// line each for its flag and environment variable, its values, its modes and who may set it.
func writeSettings(w io.Writer, docs []packs.SettingDoc) {
	fmt.Fprintln(w, settingsIntro)
	for _, d := range docs {
		fmt.Fprintf(w, "\n%s\n    %s\n", d.Key, d.Doc)
		var line []string
		if d.Flag != "" {
			line = append(line, "flag: --"+d.Flag)
		}
		if d.Env != "" {
			line = append(line, "env: "+d.Env)
		}
		def := d.Default
		if def == "" {
			def = "unset"
		}
		line = append(line, "default: "+def)
		fmt.Fprintf(w, "    %s\n", strings.Join(line, "   "))
		fmt.Fprintf(w, "    values: %s\n", settingValues(d))
		fmt.Fprintf(w, "    modes: %s\n", settingModes(d))
		fmt.Fprintf(w, "    set by: %s\n", setBy(d))
	}
}

// settingValues words what values a setting takes, and the most a repository's file may set.
func settingValues(d packs.SettingDoc) string {
	if d.RepoMax > 0 {
		return d.Bounds + fmt.Sprintf(" (at most %d from a pack or the workspace)", d.RepoMax)
	}
	return d.Bounds
}

// settingModes words which modes take a setting.
func settingModes(d packs.SettingDoc) string {
	switch {
	case d.Every:
		return "every mode"
	case d.Ledger:
		return "locum ledger only"
	case len(d.Modes) == 0:
		return "no mode this locum registers"
	}
	return strings.Join(d.Modes, ", ")
}

// setBy words who may set a setting.
func setBy(d packs.SettingDoc) string {
	if d.OperatorOnly {
		return "the operator only"
	}
	who := []string{"the operator"}
	switch {
	case d.Repository:
		who = append(who, "a pack or the workspace")
	case d.Endpoint:
		who = append(who, "the workspace's endpoint")
	}
	switch {
	case d.Lower:
		who = append(who, "a tool call, only to lower or narrow it")
	case d.Call:
		who = append(who, "a tool call")
	}
	return strings.Join(who, ", ")
}
