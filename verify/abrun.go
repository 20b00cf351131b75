package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/locumdev/locum/evals"
	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
	"github.com/locumdev/locum/untrusted"
)

// ABInput is the workspace whose A/B evidence ABRun checks.
type ABInput struct {
	Validator *schema.Validator
	Root      string
	// Trust is the workspace's trust.keys, the keys eval --verify holds records and routing to:
	// CI has no operator's user config.
	Trust []string
	// Roles are the roles the composition declares.
	Roles map[string]packs.Role
}

// FindingsError is a record or a routing file that does not hold: every finding that fails it,
// each already safe for a terminal.
type FindingsError struct{ Findings []string }

func (e *FindingsError) Error() string {
	var b strings.Builder
	if len(e.Findings) == 1 {
		b.WriteString("1 finding")
	} else {
		fmt.Fprintf(&b, "%d findings", len(e.Findings))
	}
	for _, f := range e.Findings {
		b.WriteString("\n    FAIL " + f)
	}
	return b.String()
}

// ABRun checks a workspace's A/B evidence with no model and no network, as the pack's ab-run
// recipe runs it in CI: first the baseline, the rails' own offline checks (--verify-offline's:
// the rails a role's routing runs under), then every record under .locum/evals/ab as eval
// --verify checks it, then the routing the workspace ships, against the record it names and as a
// run would resolve each role it enables. Every check runs whatever the ones before it found, and
// the report's exit code folds them all.
func ABRun(ctx context.Context, in ABInput, w io.Writer) (Report, error) {
	return abRun(ctx, in, OfflineChecks(), w)
}

func abRun(ctx context.Context, in ABInput, baseline []Check, w io.Writer) (Report, error) {
	checks := append([]Check(nil), baseline...)
	checks = append(checks, recordChecks(in)...)
	checks = append(checks, routingCheck(in))
	rep, err := runChecks(ctx, DefaultRails(), checks, w)
	if err != nil {
		return rep, err
	}
	fmt.Fprintf(w, "ab-run: %d checks, %d red, %d could not run\n", len(rep.Results), rep.count(Red), rep.count(CouldNot))
	return rep, nil
}

// recordChecks are one check per record the workspace keeps; with none, one check that says so.
func recordChecks(in ABInput) []Check {
	names, err := evals.ListRecords(in.Root)
	if err != nil {
		return []Check{{Name: "records", Run: func(context.Context, *Env) error { return couldNot(err) }}}
	}
	if len(names) == 0 {
		return []Check{{Name: "records", Run: func(_ context.Context, env *Env) error {
			env.Note("no A/B record under " + evals.RecordDir)
			return nil
		}}}
	}
	checks := make([]Check, len(names))
	for i, name := range names {
		checks[i] = Check{Name: "record/" + untrusted.Escape(name), Run: func(_ context.Context, env *Env) error {
			ver, err := evals.VerifyRecord(in.Validator, in.Root, name, in.Trust, in.Roles, false)
			if err != nil {
				return couldNot(err)
			}
			return findings(env, ver)
		}}
	}
	return checks
}

// routingCheck holds the routing the workspace ships to the record it names.
func routingCheck(in ABInput) Check {
	return Check{Name: "routing", Run: func(_ context.Context, env *Env) error {
		ver, err := evals.VerifyRouting(in.Validator, in.Root, in.Trust, in.Roles)
		switch {
		case errors.Is(err, evals.ErrNoRouting):
			env.Note(err.Error())
			return nil
		case err != nil:
			return couldNot(err)
		}
		return findings(env, ver)
	}}
}

// findings is the failing findings of a verification as an error, nil when there are none; its
// notes go to the check's report.
func findings(env *Env, ver *evals.Verification) error {
	var fails []string
	for _, f := range ver.Findings {
		if f.Fail {
			fails = append(fails, untrusted.Escape(f.Text))
		} else {
			env.Note(untrusted.Escape(f.Text))
		}
	}
	if len(fails) == 0 {
		return nil
	}
	return &FindingsError{Findings: fails}
}
