package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v3"
)

// Exit codes, the same for every command. exitCodes says what each means; the root help, every
// command's help, `locum help exit-codes` and docs/reference are written from it.
const (
	exitOK       = 0
	exitRed      = 1
	exitCouldNot = 2
)

// exitMeaning is what one exit code says for every command: a few words, then the cases.
type exitMeaning struct {
	words, cases string
}

// exitCodes are the exit codes' meanings, indexed by code. A result object's status says the same
// (OK; RED or REFUSED; ERROR).
var exitCodes = [...]exitMeaning{
	exitOK: {"done", "the command did what it was asked, and any verdict it gives is green (status OK)"},
	exitRed: {"a red verdict, or a refusal before any request",
		"an edit still red after its last attempt, an invalid manifest, a red recipe (status RED); an endpoint " +
			"off loopback, a prompt over the budget or the model's loaded context, a role with no model (the " +
			"refusal reads the server's model list to name the chat models you could accept), an eval --ab host " +
			"command that turns its permission checks off, a file you changed in init's way (status REFUSED)"},
	exitCouldNot: {"could not run",
		"bad arguments or input, no server, a server still loading its model, an HTTP error, a redirect, a reply " +
			"that is not an answer (a prompt the server cut included), a verify command that gave no verdict, a " +
			"signal, an invalid workspace, a recipe that exited 2, 126 or 127, nothing to run (status ERROR)"},
}

// exitWords are one command's words for the exit codes it returns. A command that leaves red
// empty never exits 1; done and couldNot add to the shared words, or leave them alone when empty.
type exitWords struct {
	done, red, couldNot string
}

// exitLine is one exit code of one command as help shows it.
type exitLine struct {
	code    int
	meaning string
}

// lines are the exit codes cmd returns and what each says for it: 0 and 2 always (every command
// may meet a command line it cannot read), 1 where the command says what it means.
func (w exitWords) lines() []exitLine {
	out := []exitLine{{exitOK, exitCodes[exitOK].words}}
	if w.done != "" {
		out[0].meaning = w.done
	}
	if w.red != "" {
		out = append(out, exitLine{exitRed, w.red})
	}
	couldNot := exitCodes[exitCouldNot].words
	if w.couldNot != "" {
		couldNot += ": " + w.couldNot
	}
	return append(out, exitLine{exitCouldNot, couldNot})
}

// sharedExitLines are the exit codes as every command shares them, for the root's help.
func sharedExitLines() []exitLine {
	out := make([]exitLine, len(exitCodes))
	for code, m := range exitCodes {
		out[code] = exitLine{code, m.words}
	}
	return out
}

func (e *env) helpExitCodesCommand() *cli.Command {
	return &cli.Command{
		Name:         "exit-codes",
		Usage:        "what each exit code means, for every command and for each",
		UsageText:    "locum help exit-codes",
		OnUsageError: onUsageError,
		Metadata:     helpOf(commandHelp{examples: []string{"locum help exit-codes"}}),
		Action: func(_ context.Context, cmd *cli.Command) error {
			if cmd.NArg() > 0 {
				return usagef(cmd, "unexpected argument %q", cmd.Args().First())
			}
			writeExitCodes(e.stdout, cmd.Root())
			return nil
		},
	}
}

// writeExitCodes prints the shared meaning of each exit code, then each command's own words.
func writeExitCodes(w io.Writer, root *cli.Command) {
	fmt.Fprintln(w, "Every locum command exits with one of three codes:")
	fmt.Fprintln(w)
	for code, m := range exitCodes {
		fmt.Fprintf(w, "%d  %s\n   %s\n", code, m.words, wrapText(m.cases, helpWidth-3, "   "))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "What each says of each command:")
	for _, cmd := range commandsOf(root) {
		fmt.Fprintf(w, "\n%s\n", cmd.FullName())
		for _, l := range helpOfCommand(cmd).exits.lines() {
			fmt.Fprintf(w, "   %d  %s\n", l.code, wrapText(l.meaning, helpWidth-6, strings.Repeat(" ", 6)))
		}
	}
}
