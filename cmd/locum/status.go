package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/job"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/engine"
	"github.com/locumdev/locum/untrusted"
)

func (e *env) statusCommand() *cli.Command {
	flags := settingFlags("")
	flags = append(flags,
		&cli.StringFlag{Name: "model", Usage: "a chat model to look for among those the server lists"},
		&cli.StringFlag{Name: "embed-model", Usage: "the embedding model to look for", DefaultText: "dedup's embed_model"},
		&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object on stdout"},
	)
	return &cli.Command{
		Name:     "status",
		Category: groupInspect,
		Usage:    "say whether a model server answers on the endpoint, which one it is, and what it serves",
		Description: "Probes the endpoint (LM Studio, Ollama, llama-server, llama-cpp-python, vLLM, or unknown), lists\n" +
			"its models with their loaded context windows where the server tells, and says whether the\n" +
			"chat and embedding models are listed (llama-server answers any name, so only a listed model\n" +
			"counts). Without --model it names the model each role resolves to (earned, or accepted in\n" +
			"your user config) and where from.",
		UsageText: "locum status [--base-url URL] [--model ID] [--json]",
		Metadata: helpOf(commandHelp{
			examples: []string{
				"locum status",
				"locum status --model qwen2.5-coder:7b",
				"locum status --base-url http://127.0.0.1:11434/v1 --json",
			},
			exits: exitWords{
				done: "the server answers",
				red: "the endpoint is refused (off loopback), or the server lists models and not the one --model names " +
					"(a run naming it would be refused, unless --allow-unlisted-model)",
				couldNot: "no server answers, or it is still loading its model",
			},
		}),
		Flags:        flags,
		OnUsageError: onUsageError,
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			return e.status(ctx, cmd)
		},
	}
}

func (e *env) status(ctx context.Context, cmd *cli.Command) error {
	jobs, err := e.jobs(setFlags(cmd, ""))
	if err != nil {
		return err
	}
	rep, err := jobs.Status(ctx, job.StatusRequest{Model: cmd.String("model"), EmbedModel: cmd.String("embed-model"), ArgName: rails.FlagName})
	var unread *job.WorkspaceError
	switch {
	case errors.As(err, &unread):
		return withCode(exitCouldNot, err)
	case err != nil:
		return withCode(exitCouldNot, fmt.Errorf("locum %s: %w", cmd.Name, err))
	}
	if cmd.Bool("json") {
		out, _ := json.MarshalIndent(rep, "", "  ")
		fmt.Fprintf(e.stdout, "%s\n", out)
	} else {
		e.printStatus(rep)
	}
	if !rep.Up {
		code := exitCouldNot
		if rep.Error != nil && rep.Error.Kind == "off_loopback" {
			code = exitRed
		}
		return withCode(code, fmt.Errorf("locum status: %s", untrusted.EscapeLines(rep.Error.Message)))
	}
	if rep.ModelRefusal != nil {
		// The answer to "can I run --model ID here?" is no: a run naming it would be refused.
		return withCode(exitRed, fmt.Errorf("locum status: %s", untrusted.EscapeLines(rep.ModelRefusal.Message)))
	}
	return nil
}

func (e *env) printStatus(rep *engine.StatusReport) {
	w := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "endpoint\t%s\t(%s)\n", rep.Endpoint, rep.Source)
	if !rep.Up {
		switch {
		case rep.Error != nil && rep.Error.Kind == "loading":
			who := "the server"
			if rep.ServerName != nil {
				who = *rep.ServerName
			}
			fmt.Fprintf(w, "server\t%s is loading its model\t(retry shortly)\n", who)
		case rep.Error != nil && rep.Error.Kind == "off_loopback":
			fmt.Fprintf(w, "server\tnot asked: the endpoint is refused\t\n")
		default:
			fmt.Fprintf(w, "server\tnot answering\t\n")
		}
		if len(rep.Start) > 0 {
			fmt.Fprintf(w, "start one\t%s\t\n", strings.Join(rep.Start, "   or   "))
		}
		printBreakEven(w, rep)
		w.Flush()
		return
	}
	server := *rep.ServerName
	if rep.Version != "" {
		server += " " + rep.Version
	}
	fmt.Fprintf(w, "server\t%s\t(answered in %dms)\n", untrusted.Escape(server), rep.LatencyMs)
	if len(rep.Models) == 0 {
		fmt.Fprintf(w, "models\tnone listed\t\n")
	}
	for i, m := range rep.Models {
		label := ""
		if i == 0 {
			label = "models"
		}
		var notes []string
		if m.Loaded != nil {
			if *m.Loaded {
				notes = append(notes, "loaded")
			} else {
				notes = append(notes, "not loaded")
			}
		}
		if m.Context > 0 {
			notes = append(notes, fmt.Sprintf("context %d", m.Context))
		}
		fmt.Fprintf(w, "%s\t%s\t%s\n", label, untrusted.Escape(m.ID), strings.Join(notes, ", "))
	}
	type presence struct {
		label string
		m     *engine.ModelPresence
	}
	models := []presence{{"chat model", rep.ChatModel}}
	if rep.ChatModel == nil && len(rep.RoleModels) > 0 {
		models = nil
		for i := range rep.RoleModels {
			models = append(models, presence{"role " + rep.RoleModels[i].Role, &rep.RoleModels[i].ModelPresence})
		}
	}
	for _, p := range append(models, presence{"embed model", rep.EmbedModel}) {
		if p.m == nil {
			how := "(--model, or a role's earned routing or accepted model: locum roles)"
			if p.label == "embed model" && rep.EmbedNote != "" {
				how = "(" + rep.EmbedNote + ")"
			}
			fmt.Fprintf(w, "%s\tnot set\t%s\n", p.label, how)
			continue
		}
		state := "listed"
		if !p.m.Listed {
			state = "NOT listed by the server"
		}
		fmt.Fprintf(w, "%s\t%s: %s\t(%s)\n", p.label, untrusted.Escape(p.m.ID), state, p.m.Source)
	}
	printBreakEven(w, rep)
	w.Flush()
}

// printBreakEven is the break-even of each mode and role, one a line, up or not: it is what a
// host decides on before it calls.
func printBreakEven(w io.Writer, rep *engine.StatusReport) {
	for i, r := range rep.BreakEven {
		label := ""
		if i == 0 {
			label = "break-even"
		}
		fmt.Fprintf(w, "%s\t%s\t\n", label, untrusted.Escape(r.Words()))
	}
	if rep.BreakEvenNote != "" {
		fmt.Fprintf(w, "\t%s\t\n", rep.BreakEvenNote)
	}
}
