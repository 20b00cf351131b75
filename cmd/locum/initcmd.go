package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/mcp"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/routing"
	"github.com/locumdev/locum/runner/client"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) initCommand() *cli.Command {
	// The built-in persona is locum's own file: a fault in it is a build's, caught by its tests.
	persona, _ := packs.LocalWorker()
	return &cli.Command{
		Name:     "init",
		Category: groupSetUp,
		Usage:    "set up this repository: a workspace composing tools/local-llm, the delegate-local skill, the MCP host config and a local worker",
		Description: "Writes " + packs.WorkspaceFile + ", " + packs.SkillInstallPath + ", " + packs.HostConfigPath + "\n" +
			"(a locum server running `locum mcp`, for Claude Code, Cursor and other MCP hosts) and " + packs.WorkerInstallPath + "\n" +
			"(a Claude Code subagent whose only tools are locum's) at the repository root. A worker file of\n" +
			"your own is kept, and init goes on.\n" +
			"Run again, it changes nothing. An existing " + packs.HostConfigPath + " gets the locum server added (or its locum\n" +
			"entry replaced), every other server and key kept, with or without --force. A file you changed\n" +
			"is never replaced without --force. Every file is checked before any is written: a refusal (exit 1)\n" +
			"names each conflict and writes nothing.\n\n" +
			"Then it looks for a model server: the endpoint locum uses now and, unless a flag or the environment\n" +
			"names it, the usual local ports (LM Studio 1234, Ollama 11434, llama-server 8080, vLLM 8000). It says\n" +
			"what answers and what it serves, and the next command (locum roles accept code MODEL). When the\n" +
			"endpoint in use does not answer and another does, it offers to write that one into your user config\n" +
			"(never into the repository): a [y/N] question on a terminal, --yes elsewhere. Finding no server is\n" +
			"not an error.\n\n" +
			"With --plugin DIR it writes none of the repository's files, but the skill, the local worker and\n" +
			"locum's MCP server into DIR as one Claude Code plugin, for every repository, and a marketplace that\n" +
			"lists it, by the same rules. Install it in Claude Code with /plugin marketplace add DIR, then\n" +
			"/plugin install " + packs.PluginName + "@" + packs.PluginMarketplace + " (or try it with claude --plugin-dir DIR). Its server runs\n" +
			"locum mcp --" + packs.ServerDirFlag + " on the project Claude Code opened. Then it looks for a model server, as above.",
		UsageText: "locum init [--force] [--yes] [--base-url URL] [--worker-model ALIAS] [--worker-max-turns N] [--plugin DIR]",
		Metadata: helpOf(commandHelp{
			examples: []string{
				"locum init --yes",
				"locum init --force --worker-model sonnet --worker-max-turns 30",
				"locum init --plugin ~/.local/share/locum/claude-plugin",
			},
			exits: exitWords{done: "set up, or already so; finding no server is no failure",
				red: "refused: a file you changed is in the way (each is named, and nothing is written)"},
		}),
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "force", Usage: "replace files that differ from what init writes"},
			&cli.BoolFlag{Name: "yes", Usage: "write the endpoint found into the user config without asking"},
			&cli.StringFlag{Name: "worker-model", Value: persona.Model, DefaultText: persona.Model, Usage: "the host's model alias for the local worker (" + packs.WorkerInstallPath + "): haiku, sonnet, opus or inherit"},
			&cli.IntFlag{Name: "worker-max-turns", Value: persona.MaxTurns, DefaultText: strconv.Itoa(persona.MaxTurns), Usage: "the local worker's turn cap"},
			&cli.StringFlag{Name: "plugin", Usage: "write the skill, the local worker and the MCP server into DIR as one Claude Code plugin, for every repository, instead of this repository's files"},
		}, settingFlags("", "timeout", "first-token-timeout", "max-input-bytes", "max-output-tokens", "effort")...),
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			v, err := e.schemas()
			if err != nil {
				return err
			}
			root, err := e.root()
			if err != nil {
				return err
			}
			worker, err := e.worker(cmd, root)
			if err != nil {
				return err
			}
			dir, plugin := cmd.String("plugin"), cmd.IsSet("plugin")
			if plugin && dir == "" {
				return usagef(cmd, "--plugin wants a directory")
			}
			var actions []packs.InitAction
			if plugin {
				actions, err = packs.InitPlugin(dir, cmd.Bool("force"), worker, version())
			} else {
				actions, err = packs.Init(v, root, cmd.Bool("force"), worker)
			}
			var notDir *packs.PluginDirError
			if errors.As(err, &notDir) {
				return usagef(cmd, "--plugin %v", err)
			}
			if errors.Is(err, packs.ErrRefused) {
				return withCode(exitRed, err)
			}
			if err != nil {
				return withCode(exitCouldNot, err)
			}
			for _, a := range actions {
				line := fmt.Sprintf("%s %s", a.Action, a.File)
				if a.Note != "" {
					line += " (" + a.Note + ")"
				}
				fmt.Fprintln(e.stdout, untrusted.Escape(line))
			}
			if plugin {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return withCode(exitCouldNot, err)
				}
				fmt.Fprintf(e.stderr, "init: install the plugin in Claude Code with /plugin marketplace add %s, then /plugin install %s@%s (or try it: claude --plugin-dir %s)\n",
					untrusted.Escape(abs), packs.PluginName, packs.PluginMarketplace, untrusted.Escape(abs))
			}
			return e.initEndpoint(ctx, cmd)
		},
	}
}

// initEndpoint finds the model server the person has and says what to run next. It writes only
// the user config, only with the person's yes, and never fails init for want of a server.
func (e *env) initEndpoint(ctx context.Context, cmd *cli.Command) error {
	v, c, err := e.workspace()
	if err != nil {
		return err
	}
	settings, err := e.resolve(cmd, c, "")
	if err != nil {
		return err
	}
	current, _ := settings.Get(packs.BaseURL)
	chosen := current.SetForRun()
	// The endpoint in use is asked under the operator's own rail (it may allow a remote one);
	// the usual ports are loopback. found is the first that answers, the one in use first.
	now := engine.CheckEndpoint(ctx, settings, engine.StatusModels{})
	reports := []*engine.StatusReport{now}
	if !chosen {
		others := slices.DeleteFunc(slices.Clone(engine.UsualEndpoints), func(u string) bool { return u == now.Endpoint })
		reports = append(reports, engine.FindServers(ctx, others)...)
	}
	var found *engine.StatusReport
	for _, rep := range reports {
		if !rep.Up {
			continue
		}
		fmt.Fprintf(e.stderr, "init: %s answers at %s: %s\n", *rep.ServerName, rep.Endpoint, describeModels(rep))
		if found == nil {
			found = rep
		}
	}
	if now.Error != nil && now.Error.Kind == "off_loopback" {
		fmt.Fprintf(e.stderr, "init: the endpoint in use is refused: %s\n", untrusted.EscapeLines(now.Error.Message))
	}
	inUse := now
	switch {
	case now.Up:
	case found == nil && chosen:
		fmt.Fprintf(e.stderr, "init: no model server answers at %s (%s); start one (%s), then run locum status\n",
			current.Value, current.Source, strings.Join(client.StartCommands(current.Value), ", "))
		return nil
	case found == nil:
		fmt.Fprintf(e.stderr, "init: no model server answers at %s or on the usual ports; start one (lms server start, ollama serve, llama-server -m MODEL.gguf, vllm serve MODEL), then run locum status\n", current.Value)
		return nil
	default:
		fmt.Fprintf(e.stderr, "init: the endpoint in use, %s (%s), does not answer\n", current.Value, current.Source)
		wrote, err := e.offerEndpoint(ctx, cmd, v, found.Endpoint)
		if err != nil {
			return err
		}
		if wrote {
			inUse = found
		}
	}
	if r := routing.RoleStatus(v, c, "code"); r.Routing != "none" {
		switch {
		case !inUse.Up:
			fmt.Fprintf(e.stderr, "init: role code runs %s (routing=%s), but no server answers at the endpoint in use\n", untrusted.Escape(r.Model), r.Routing)
		case !slices.Contains(inUse.ChatModelIDs(), r.Model) && !slices.Contains(inUse.ChatModelIDs(), r.Model+":latest"):
			fmt.Fprintf(e.stderr, "init: role code runs %s (routing=%s), which the server at %s does not list; load it, or accept another with locum roles accept code MODEL\n", untrusted.Escape(r.Model), r.Routing, inUse.Endpoint)
		default:
			fmt.Fprintf(e.stderr, "init: role code runs %s (routing=%s) on %s; the delegate-local skill can delegate now\n", untrusted.Escape(r.Model), r.Routing, inUse.Endpoint)
		}
		return nil
	}
	if chat := found.ChatModelIDs(); len(chat) > 0 {
		fmt.Fprintf(e.stderr, "init: next: locum roles accept code MODEL, with MODEL one of %s (it screens the model first)\n", untrusted.Escape(strings.Join(chat, ", ")))
	} else {
		fmt.Fprintf(e.stderr, "init: the server lists no chat model; load one, then run locum roles accept code MODEL\n")
	}
	return nil
}

// offerEndpoint writes endpoint into the user config on the person's yes (--yes, or the answer
// at a terminal), and otherwise says how to; it reports whether it wrote it.
func (e *env) offerEndpoint(ctx context.Context, cmd *cli.Command, v *schema.Validator, endpoint string) (bool, error) {
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return false, withCode(exitCouldNot, fmt.Errorf("locum init: %w", err))
	}
	file := dirs.UserConfigFile()
	if !cmd.Bool("yes") {
		if !e.stdinIsTerminal() {
			fmt.Fprintf(e.stderr, "init: locum init --yes writes %s as your endpoint in %s (for every repository); or pass --base-url to each command\n", endpoint, file)
			return false, nil
		}
		fmt.Fprintf(e.stderr, "init: write %s as your endpoint in %s (for every repository)? [y/N] ", endpoint, file)
		yes, err := e.askYes(ctx)
		if err != nil || !yes {
			fmt.Fprintf(e.stderr, "init: endpoint not written; pass --base-url %s to each command, or run locum init --yes\n", endpoint)
			return false, nil
		}
	}
	if err := packs.SetEndpoint(v, dirs, endpoint); err != nil {
		return false, withCode(exitCouldNot, fmt.Errorf("locum init: %w", err))
	}
	fmt.Fprintf(e.stderr, "init: wrote endpoint.base_url %s to %s\n", endpoint, file)
	return true, nil
}

// describeModels is a server's models as init says them: chat models, then embedding models.
func describeModels(rep *engine.StatusReport) string {
	chat, embed := rep.ChatModelIDs(), rep.EmbedModelIDs()
	if len(chat)+len(embed) == 0 {
		return "no model listed"
	}
	var parts []string
	if len(chat) > 0 {
		parts = append(parts, "chat "+strings.Join(chat, ", "))
	}
	if len(embed) > 0 {
		parts = append(parts, "embedding "+strings.Join(embed, ", "))
	}
	return untrusted.Escape(strings.Join(parts, "; "))
}

// worker is the local worker init installs: the tools a locum server started here lists, and the
// model alias and turn cap the operator chose (the persona's by default).
func (e *env) worker(cmd *cli.Command, root string) (packs.Worker, error) {
	w := packs.Worker{Model: cmd.String("worker-model"), MaxTurns: int(cmd.Int("worker-max-turns"))}
	if err := w.CheckTurns(); err != nil {
		return w, usagef(cmd, "--worker-max-turns %v", err)
	}
	if err := w.CheckModel(); err != nil {
		return w, usagef(cmd, "--worker-model %v", err)
	}
	srv, err := mcp.New(mcp.Options{Dir: root, Env: e.lookup, Version: version()})
	if err != nil {
		return w, withCode(exitCouldNot, err)
	}
	w.Tools = srv.Tools()
	return w, nil
}
