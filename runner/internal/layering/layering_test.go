package layering

import (
	"go/build"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/locumdev/locum"

// The modes: each imports the client, the engine and what is below them, never another mode.
var modes = []string{"runner/transform", "runner/summarize", "runner/handoff", "runner/dedup", "runner/agent", "runner/verifycheck"}

// A rule names a package and the runner packages it may reach, directly or through any other
// package of the module.
type rule struct {
	pkg     string
	mayOnly []string
	// never are packages outside runner/ the package may not reach either: the layers above it.
	never []string
	// direct checks the package's own imports only, not what they reach.
	direct bool
}

// rules is the layering ARCHITECTURE.md draws. Test helpers (runner/scripted and
// runner/internal/runtest) are allowed wherever a package's tests need them.
func rules() []rule {
	helpers := []string{"runner/scripted", "runner/internal/runtest"}
	shared := append([]string{"runner/client", "runner/cost", "runner/engine", "runner/evidence", "runner/review", "runner/scope", "runner/strength"}, helpers...)
	// Above the runner: the model choice, the job layer, workflows over it, then the front ends.
	above := []string{"routing", "job", "workflow", "mcp", "cmd/locum"}
	rs := []rule{
		{pkg: "runner/client", mayOnly: helpers, never: above},
		// Every git command goes through gitsafe, so it sits below everything that runs git.
		{pkg: "gitsafe", mayOnly: nil, never: above},
		// The host-cost arithmetic is a leaf: numbers in, numbers out.
		{pkg: "runner/cost", mayOnly: nil, never: above},
		{pkg: "runner/engine", mayOnly: append([]string{"runner/client", "runner/cost"}, helpers...), never: above},
		{pkg: "runner/scope", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine"}, helpers...), never: above},
		// What a verify shows of a kept change, measured with mutants: beside the scope, for modes.
		{pkg: "runner/strength", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine"}, helpers...), never: above},
		// Claims held to the lines they cite: the gate and the handoff's shape, for the modes
		// and the eval task that grades a handoff.
		{pkg: "runner/evidence", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine", "runner/scope"}, helpers...), never: above},
		// A run's branch under review: the modes that leave one register with it.
		{pkg: "runner/review", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine"}, helpers...), never: above},
		// The host's own usage log is read beside the arithmetic, by the ledger only.
		{pkg: "runner/hostusage", mayOnly: []string{"runner/cost"}, never: above},
		// The ledger reads journals, as analyze does; no mode reaches it.
		{pkg: "runner/ledger", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine", "runner/hostusage"}, helpers...), never: above},
		// The model choice reads records and the engine's errors; the job layer runs any
		// registered mode. Neither imports a mode itself: they reach the modes only through
		// evals, whose shipped tasks (and so the records' fingerprints) run on them, which is
		// why these two rules look at their own imports.
		{"routing", append([]string{"runner/client", "runner/cost", "runner/engine"}, helpers...), above[1:], true},
		{"job", append([]string{"runner/client", "runner/cost", "runner/engine", "runner/ledger"}, helpers...), above[2:], true},
		// A workflow's items are jobs of the modes it builds, through the job layer.
		{pkg: "workflow", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine", "runner/hostusage", "runner/ledger", "runner/evidence", "runner/review", "runner/scope", "runner/strength", "runner/transform", "runner/summarize", "runner/handoff", "runner/dedup"}, helpers...), never: above[3:]},
		// A bench's cells are jobs of the modes it compares models on, through the job layer,
		// as a workflow's items are; the two share the pool, and neither imports the other.
		{pkg: "bench", mayOnly: append([]string{"runner/client", "runner/cost", "runner/engine", "runner/hostusage", "runner/ledger", "runner/review", "runner/scope", "runner/strength", "runner/transform", "runner/summarize", "runner/dedup"}, helpers...), never: above[2:]},
		// The pool of servers: probed through the client, under the rails.
		{pkg: "pool", mayOnly: []string{"runner/client"}, never: above},
		{pkg: "mcp", mayOnly: append([]string{"runner/analyze", "runner/client", "runner/cost", "runner/engine", "runner/hostusage", "runner/ledger", "runner/evidence", "runner/review", "runner/scope", "runner/strength", "runner/transform", "runner/summarize", "runner/handoff", "runner/dedup", "runner/agent", "runner/verifycheck"}, helpers...), never: above[4:]},
	}
	for _, m := range modes {
		rs = append(rs, rule{pkg: m, mayOnly: shared, never: above})
	}
	return rs
}

// graph maps each of the module's packages (by path under the module) to the module packages it
// imports.
type graph map[string][]string

// violations lists every runner package a rule's package reaches that the rule does not allow,
// with the chain of imports that reaches it. The package's own tests count (tests maps a package
// to its tests' imports); the tests of the packages it reaches do not, as they are not built
// into it.
func violations(g, tests graph, rs []rule) []string {
	var out []string
	for _, r := range rs {
		allowed := map[string]bool{r.pkg: true}
		for _, p := range r.mayOnly {
			allowed[p] = true
		}
		never := map[string]bool{}
		for _, p := range r.never {
			never[p] = true
		}
		// Breadth first, so the chain reported is a shortest one.
		via := map[string]string{r.pkg: ""}
		queue := []string{r.pkg}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			next := g[p]
			if p == r.pkg {
				next = append(append([]string(nil), next...), tests[p]...)
			}
			for _, q := range next {
				if _, seen := via[q]; seen {
					continue
				}
				via[q] = p
				if !r.direct {
					queue = append(queue, q)
				}
				if strings.HasPrefix(q, "runner/") && !allowed[q] || never[q] {
					chain := []string{q}
					for at := p; at != ""; at = via[at] {
						chain = append([]string{at}, chain...)
					}
					out = append(out, r.pkg+" reaches "+q+": "+strings.Join(chain, " -> "))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// moduleGraph reads the import lists of every package of the module from its source: the
// packages' own, and their tests'.
func moduleGraph(t *testing.T, root string) (g, tests graph) {
	t.Helper()
	g, tests = graph{}, graph{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
			return filepath.SkipDir
		}
		pkg, err := build.Default.ImportDir(path, 0)
		if err != nil {
			if _, none := err.(*build.NoGoError); none {
				return nil
			}
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		inModule := func(lists ...[]string) []string {
			var deps []string
			for _, list := range lists {
				for _, imp := range list {
					if after, ok := strings.CutPrefix(imp, module+"/"); ok {
						deps = append(deps, after)
					}
				}
			}
			return deps
		}
		g[filepath.ToSlash(rel)] = inModule(pkg.Imports)
		tests[filepath.ToSlash(rel)] = inModule(pkg.TestImports, pkg.XTestImports)
		return nil
	})
	require.NoError(t, err)
	return g, tests
}

func TestRunnerLayering(t *testing.T) {
	g, tests := moduleGraph(t, filepath.Join("..", "..", ".."))
	for _, r := range rules() {
		require.Contains(t, g, r.pkg, "the rule names a package that is not there")
	}
	assert.Empty(t, violations(g, tests, rules()))
}

// The test helpers are built into tests only: no package's own code imports them, but the
// helpers themselves.
func TestHelpersStayInTests(t *testing.T) {
	g, _ := moduleGraph(t, filepath.Join("..", "..", ".."))
	helpers := map[string]bool{"runner/scripted": true, "runner/internal/runtest": true, gitFixtures: true}
	for pkg, deps := range g {
		for _, d := range deps {
			if helpers[d] && !helpers[pkg] {
				t.Errorf("%s imports the test helper %s outside its tests", pkg, d)
			}
		}
	}
}

// The check itself, on graphs made to break each rule.
func TestViolationsFindsEachBreak(t *testing.T) {
	base := graph{
		"runner/client":    {"rails"},
		"runner/engine":    {"runner/client", "rails"},
		"runner/scope":     {"runner/engine", "runner/client"},
		"runner/transform": {"runner/scope", "runner/engine"},
		"runner/summarize": {"runner/scope"},
		"runner/dedup":     {"runner/engine"},
		"runner/agent":     {"runner/engine", "runner/client"},
		"rails":            {"untrusted"},
		"evals":            {"runner/agent", "runner/engine"},
		"routing":          {"evals", "runner/engine"},
		"job":              {"routing", "runner/engine"},
		"mcp":              {"job", "runner/transform"},
	}
	tests := graph{"runner/engine": {"runner/internal/runtest"}, "rails": {"runner/engine"}}
	require.Empty(t, violations(base, tests, rules()), "a package's tests are not built into what imports it")
	cases := []struct {
		name, from, to string
		want           string
	}{
		{"the client imports the engine", "runner/client", "runner/engine", "runner/client reaches runner/engine: runner/client -> runner/engine"},
		{"the engine imports a mode", "runner/engine", "runner/dedup", "runner/engine reaches runner/dedup: runner/engine -> runner/dedup"},
		{"a mode imports another", "runner/summarize", "runner/transform", "runner/summarize reaches runner/transform: runner/summarize -> runner/transform"},
		{"a mode reaches another through a package outside runner", "runner/dedup", "evals", "runner/dedup reaches runner/agent: runner/dedup -> evals -> runner/agent"},
		{"the client reaches the engine through rails", "rails", "runner/engine", "runner/client reaches runner/engine: runner/client -> rails -> runner/engine"},
		{"the engine imports the job layer", "runner/engine", "job", "runner/engine reaches job: runner/engine -> job"},
		{"the job layer imports a mode", "job", "runner/transform", "job reaches runner/transform: job -> runner/transform"},
		{"the job layer imports a front end", "job", "mcp", "job reaches mcp: job -> mcp"},
		{"the model choice imports the job layer", "routing", "job", "routing reaches job: routing -> job"},
		{"the MCP server imports the CLI", "mcp", "cmd/locum", "mcp reaches cmd/locum: mcp -> cmd/locum"},
	}
	t.Run("a mode's test imports another mode", func(t *testing.T) {
		assert.Contains(t, violations(base, graph{"runner/dedup": {"runner/transform"}}, rules()),
			"runner/dedup reaches runner/transform: runner/dedup -> runner/transform")
	})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := graph{}
			for k, v := range base {
				g[k] = append([]string(nil), v...)
			}
			g[tc.from] = append(g[tc.from], tc.to)
			assert.Contains(t, violations(g, tests, rules()), tc.want)
		})
	}
}
