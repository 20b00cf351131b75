package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/rails"
	"github.com/locumdev/locum/runner/transform"
	"github.com/locumdev/locum/untrusted"
)

// recoverAtStart restores files an interrupted transform left edited, before any command runs.
// A file that changed since stops locum until the user says which version to keep.
func (e *env) recoverAtStart(args []string) error {
	for _, a := range args[1:] {
		switch a {
		case "recover", "--help", "-h", "help", "--version", "-v":
			return nil
		}
	}
	root, err := e.root()
	if err != nil {
		return nil
	}
	dir := transform.RollbackDir(root)
	if entries, err := os.ReadDir(dir); err != nil || len(entries) == 0 {
		return nil
	}
	rb, err := e.rollback(root, false)
	if err != nil {
		return withCode(exitCouldNot, fmt.Errorf("locum: %w", err))
	}
	done, err := rails.Recover(rb)
	for _, r := range done {
		if r.Action == "untrusted" {
			fmt.Fprintf(e.stderr, "locum: ignoring the rollback record %s: %s; locum never restores or deletes a record it cannot trust. If it is not yours, remove it: %s\n",
				untrusted.Escape(r.Record.RecordFile), untrusted.Escape(r.Why), untrusted.Escape(r.RemoveHint()))
			continue
		}
		fmt.Fprintf(e.stderr, "locum: restored %s: an interrupted run (pid %d) had left its edit in place\n", untrusted.Escape(r.Record.Path), r.Record.PID)
	}
	if err != nil {
		return withCode(exitCouldNot, err)
	}
	return nil
}

// rollback is where this repository's crash records live and the operator's key for them; with
// create, the key is made when there is none yet (a transform is about to write a record).
func (e *env) rollback(root string, create bool) (rails.Rollback, error) {
	rb := rails.Rollback{Dir: transform.RollbackDir(root), Root: root}
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return rb, err
	}
	rb.Key, err = rails.LoadRollbackKey(dirs.State, create)
	return rb, err
}

func (e *env) recoverCommand() *cli.Command {
	return &cli.Command{
		Name:     "recover",
		Category: groupReview,
		Usage:    "resolve rollback records that interrupted transforms left behind",
		Metadata: helpOf(commandHelp{examples: []string{
			"locum recover --list",
			"locum recover --restore pkg/calc/calc.go",
			"locum recover --discard",
		}}),
		Description: "Every locum start restores a file an interrupted transform left edited. When the file\n" +
			"changed again after the crash, locum stops and asks: --list shows the records, --restore PATH\n" +
			"puts the original bytes and mode back, --discard PATH keeps the file as it is now.",
		UsageText: "locum recover --list [--json] | --restore [PATH...] | --discard [PATH...]",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "list", Usage: "list the records and what each would do"},
			&cli.BoolFlag{Name: "restore", Usage: "restore the original of PATH (all records when no PATH)"},
			&cli.BoolFlag{Name: "discard", Usage: "drop the record of PATH, keeping the file as it is (all when no PATH)"},
			&cli.BoolFlag{Name: "json", Usage: "with --list, print the records as one JSON object on stdout"},
		},
		OnUsageError: onUsageError,
		Action: func(_ context.Context, cmd *cli.Command) error {
			n := 0
			for _, f := range []string{"list", "restore", "discard"} {
				if cmd.Bool(f) {
					n++
				}
			}
			if n != 1 {
				return usagef(cmd, "give exactly one of --list, --restore, --discard")
			}
			if cmd.Bool("json") && !cmd.Bool("list") {
				return usagef(cmd, "--json goes with --list; --restore and --discard print text")
			}
			wd, err := e.getwd()
			if err != nil {
				return err
			}
			root, err := e.root()
			if err != nil {
				return err
			}
			rb, err := e.rollback(root, false)
			if err != nil {
				return withCode(exitCouldNot, fmt.Errorf("locum recover: %w", err))
			}
			if !cmd.Bool("list") {
				// A verify an interrupted run left running could write the file after it is
				// restored, or after its record is discarded.
				rails.ReapOrphans()
			}
			recs, err := rails.ListRecords(rb)
			if err != nil {
				return err
			}
			if cmd.Bool("list") && cmd.Bool("json") {
				return e.printJSON(recordsJSON(recs))
			}
			if cmd.Bool("list") {
				if len(recs) == 0 {
					fmt.Fprintln(e.stdout, "no rollback records")
				}
				for _, r := range recs {
					if r.Action == "untrusted" {
						fmt.Fprintf(e.stdout, "untrusted\t%s\t%s; remove it if it is not yours: %s\n", untrusted.Escape(r.Record.RecordFile), untrusted.Escape(r.Why), untrusted.Escape(r.RemoveHint()))
						continue
					}
					fmt.Fprintf(e.stdout, "%s\t%s\tpid %d\t%s\n", r.Action, untrusted.Escape(r.Record.Path), r.Record.PID, r.Record.Started.Format("2006-01-02T15:04:05Z"))
				}
				return nil
			}
			chosen, err := pick(recs, cmd.Args().Slice(), wd)
			if err != nil {
				return withCode(exitCouldNot, err)
			}
			for _, r := range chosen {
				if r.Action == "live" {
					return withCode(exitCouldNot, fmt.Errorf("locum recover: %s is being edited by a running locum (pid %d); leave it be", r.Record.Path, r.Record.PID))
				}
				if cmd.Bool("restore") {
					if err := rails.RestoreRecord(r); err != nil {
						return withCode(exitCouldNot, err)
					}
					fmt.Fprintf(e.stdout, "restored %s\n", r.Record.Path)
				} else {
					if err := rails.DiscardRecord(r); err != nil {
						return withCode(exitCouldNot, err)
					}
					fmt.Fprintf(e.stdout, "discarded the record of %s (the file stays as it is)\n", r.Record.Path)
				}
			}
			return nil
		},
	}
}

func pick(recs []rails.Recovery, paths []string, wd string) ([]rails.Recovery, error) {
	if len(paths) == 0 {
		return recs, nil
	}
	var out []rails.Recovery
	for _, p := range paths {
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(wd, p)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		found := false
		for _, r := range recs {
			if r.Record.Path == abs {
				out = append(out, r)
				found = true
			}
		}
		if !found {
			return nil, errors.New("no rollback record for " + p + "; locum recover --list shows them")
		}
	}
	return out, nil
}

// recordJSON is one rollback record of `recover --list --json`.
type recordJSON struct {
	Action  string  `json:"action"`
	Path    *string `json:"path"`
	PID     *int    `json:"pid"`
	Started *string `json:"started"`
	Record  string  `json:"record"`
	Why     *string `json:"why"`
	Remove  *string `json:"remove"`
}

func recordsJSON(recs []rails.Recovery) any {
	out := struct {
		Records []recordJSON `json:"records"`
	}{Records: []recordJSON{}}
	for _, r := range recs {
		j := recordJSON{Action: r.Action, Record: r.Record.RecordFile, Why: nilIfEmpty(r.Why)}
		if r.Action == "untrusted" {
			j.Remove = nilIfEmpty(r.RemoveHint())
		} else {
			pid := r.Record.PID
			j.Path, j.PID = nilIfEmpty(r.Record.Path), &pid
			j.Started = nilIfEmpty(r.Record.Started.UTC().Format(time.RFC3339))
		}
		out.Records = append(out.Records, j)
	}
	return out
}
