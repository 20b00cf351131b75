package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/locumdev/locum/packs"
	"github.com/locumdev/locum/schema"
)

// Main runs locum with the process's streams and returns its exit code. SIGINT, SIGTERM and
// SIGHUP cancel the context every command runs under.
//
// Standard output is buffered, so a table or a list of pairs is a few writes rather than one
// per cell or line; it is flushed before anything goes to standard error, so the two streams
// keep their order on a terminal.
func Main(args []string) int {
	ctx, stop := signalContext()
	defer stop()
	stdout := &bufferedFile{Writer: bufio.NewWriterSize(os.Stdout, 64<<10), file: os.Stdout}
	code := run(ctx, args, os.Stdin, stdout, &stderrAfterStdout{stdout: stdout.Writer, file: os.Stderr})
	if err := stdout.Flush(); err != nil && code == exitOK {
		fmt.Fprintf(os.Stderr, "locum: writing to standard output: %v\n", err)
		code = exitCouldNot
	}
	return code
}

// bufferedFile is Main's buffered standard output, which still knows its file, so a command can
// ask whether it writes to a terminal.
type bufferedFile struct {
	*bufio.Writer
	file *os.File
}

// unbuffered is standard output for a command that talks over it, such as the MCP server: each
// write reaches the peer at once.
func (e *env) unbuffered() io.Writer {
	switch b := e.stdout.(type) {
	case *bufio.Writer:
		return flushEach{b}
	case *bufferedFile:
		// The file itself: a server writes from several goroutines, and stderr flushes the
		// buffer from its own; with nothing in the buffer, there is nothing to share.
		_ = b.Flush()
		return b.file
	}
	return e.stdout
}

type flushEach struct{ w *bufio.Writer }

func (f flushEach) Write(p []byte) (int, error) {
	n, err := f.w.Write(p)
	if err == nil {
		err = f.w.Flush()
	}
	return n, err
}

// stderrAfterStdout writes to standard error after flushing what standard output holds.
type stderrAfterStdout struct {
	stdout *bufio.Writer
	file   *os.File
}

func (w *stderrAfterStdout) Write(p []byte) (int, error) {
	// A failed flush is reported at exit; it must not stop the message.
	_ = w.stdout.Flush()
	return w.file.Write(p)
}

// env is what every command needs from the edge of the process.
type env struct {
	// args is the command line as given, for the few decisions made before flags parse.
	args []string
	// command is the full name of the command running ("locum transform"), for the prefix of an
	// error that does not carry its own.
	command string
	// live is the progress shown while a run works and stopTicks ends its clock; isTerminal
	// replaces the terminal check and ticks the progress ticker in tests. now is the clock of the
	// progress and of what a command records as a moment (an acceptance's time).
	live           progressView
	stopTicks      func()
	isTerminal     func(io.Writer) bool
	now            func() time.Time
	ticks          <-chan time.Time
	stdin          io.Reader
	stdout, stderr io.Writer
	lookup         packs.Lookup
	getwd          func() (string, error)
	// validator is the one schema.Validator of this process, so a contract compiled for the
	// workspace is not compiled again for routing.
	validator *schema.Validator
}

// schemas returns the process's schema.Validator.
func (e *env) schemas() (*schema.Validator, error) {
	if e.validator == nil {
		v, err := schema.New()
		if err != nil {
			return nil, err
		}
		e.validator = v
	}
	return e.validator, nil
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{args: args, stdin: stdin, stdout: stdout, stderr: stderr, lookup: os.LookupEnv, getwd: os.Getwd, now: time.Now}
	if err := e.recoverAtStart(args); err != nil {
		return e.exitCode(err)
	}
	root := e.rootCommand()
	e.tagCommands(root)
	err := root.Run(ctx, args)
	e.stopProgress()
	return e.exitCode(err)
}

// exitError carries an exit code and a message already fit for the user.
type exitError struct {
	code int
	err  error
	// receipted: the receipt (and with --json the result object) is already printed.
	receipted bool
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// usageError is a command line locum cannot read. It prints with the command's usage line.
type usageError struct {
	cmd *cli.Command
	err error
}

func (e *usageError) Error() string { return e.err.Error() }

func usagef(cmd *cli.Command, format string, args ...any) error {
	return &usageError{cmd: cmd, err: fmt.Errorf(format, args...)}
}

// exitCode prints err as one line per problem (never a stack trace) and maps it to an exit code.
func (e *env) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(e.stderr, "%s: %v\n", ue.cmd.FullName(), ue.err)
		fmt.Fprintf(e.stderr, "usage: %s\n", usageLine(ue.cmd))
		fmt.Fprintf(e.stderr, "run '%s --help' for more\n", ue.cmd.FullName())
		return exitCouldNot
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if msg := ee.err.Error(); msg != "" {
			fmt.Fprintln(e.stderr, msg)
		}
		return ee.code
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(e.stderr, "%s: stopped by a signal\n", e.prefix())
		return exitCouldNot
	}
	fmt.Fprintln(e.stderr, e.configMessage(err))
	return exitCouldNot
}

// prefix starts an error line: the command that ran, else locum.
func (e *env) prefix() string {
	if e.command != "" {
		return e.command
	}
	return "locum"
}

// tagCommands makes every command record its name when it runs, so an error that reaches
// exitCode without a prefix of its own still names its command.
func (e *env) tagCommands(cmd *cli.Command) {
	for _, sub := range cmd.Commands {
		before := sub.Before
		sub.Before = func(ctx context.Context, c *cli.Command) (context.Context, error) {
			e.command = c.FullName()
			if before != nil {
				return before(ctx, c)
			}
			return ctx, nil
		}
		e.tagCommands(sub)
	}
}

// configMessage renders the errors of loading manifests and workspaces: each problem is already
// a line naming its file and place.
func (e *env) configMessage(err error) string {
	var inv *schema.InvalidError
	var syn *schema.SyntaxError
	if errors.As(err, &inv) || errors.As(err, &syn) {
		return err.Error()
	}
	return e.prefix() + ": " + err.Error()
}

func usageLine(cmd *cli.Command) string {
	if cmd.UsageText != "" {
		return cmd.UsageText
	}
	line := cmd.FullName()
	if len(cmd.Commands) > 0 {
		line += " COMMAND"
	}
	if len(cmd.Flags) > 0 {
		line += " [options]"
	}
	if cmd.ArgsUsage != "" {
		line += " " + cmd.ArgsUsage
	}
	return line
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// fullVersion is the module version and the VCS revision the binary was built from, as
// `locum version` and `locum --version` print them.
func fullVersion() string {
	rev, modified := "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		rev += ", modified"
	}
	return fmt.Sprintf("%s (revision %s)", version(), rev)
}

func (e *env) rootCommand() *cli.Command {
	root := &cli.Command{
		Name:    "locum",
		Usage:   "hand bounded work to a model on this machine, under rails enforced in code",
		Version: fullVersion(),
		Description: "locum runs one bounded job on a local OpenAI-compatible server (LM Studio, Ollama,\n" +
			"llama-server, vLLM) under rails: loopback only, an input budget, a thinking cap, and\n" +
			"rollback unless the verify command passes.",
		UsageText: "locum COMMAND [options] [arguments]\n   locum --verify-offline",
		Reader:    e.stdin,
		Writer:    e.stdout,
		ErrWriter: e.stderr,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "verify-offline", Local: true, Usage: "check that the rails hold on this machine, with zero network, and exit"},
		},
		Metadata: helpOf(commandHelp{examples: []string{
			`locum transform --file pkg/calc/calc.go --lines 10-24 --verify "go test ./pkg/calc" "return an error instead of panicking"`,
			"locum runs list --failed",
			"locum --verify-offline",
		}}),
		HideHelpCommand:                 true,
		EnableShellCompletion:           true,
		ConfigureShellCompletionCommand: configureCompletion,
		ExitErrHandler:                  func(context.Context, *cli.Command, error) {},
		OnUsageError:                    onUsageError,
		Before: func(ctx context.Context, cmd *cli.Command) (context.Context, error) {
			if cmd.Bool("verify-offline") && cmd.NArg() > 0 {
				return ctx, usagef(cmd, "--verify-offline runs alone; it does not combine with %q", cmd.Args().First())
			}
			return ctx, nil
		},
		Action: func(ctx context.Context, cmd *cli.Command) error {
			if cmd.Bool("verify-offline") {
				return e.verifyOffline(ctx)
			}
			if cmd.NArg() > 0 {
				return usagef(cmd, "unknown command %q", cmd.Args().First())
			}
			return usagef(cmd, "missing command")
		},
		// In the order the root help lists them within each group (commandGroups).
		Commands: []*cli.Command{
			e.transformCommand(),
			e.agentCommand(),
			e.runCommand(),
			e.summarizeCommand(),
			e.handoffCommand(),
			e.dedupCommand(),
			e.runsCommand(),
			e.ledgerCommand(),
			e.recoverCommand(),
			e.statusCommand(),
			e.symbolsCommand(),
			e.rolesCommand(),
			e.packsCommand(),
			e.verifyCheckCommand(),
			e.cacheCommand(),
			e.versionCommand(),
			e.helpCommand(),
			e.initCommand(),
			e.mcpCommand(),
			e.evalCommand(),
			e.benchCommand(),
			e.verifyCommand(),
		},
	}
	keepFlagValuesWhole(root)
	return root
}

// keepFlagValuesWhole makes every repeatable flag of cmd and its subcommands take each value as
// given: urfave/cli splits a slice flag's value on commas unless each command that parses it says
// not to, and a value such as a workflow's task holds commas of its own. A flag is repeated for
// each value instead.
func keepFlagValuesWhole(cmd *cli.Command) {
	cmd.DisableSliceFlagSeparator = true
	for _, sub := range cmd.Commands {
		keepFlagValuesWhole(sub)
	}
}

// configureCompletion shows urfave/cli's completion command, which it hides: docs/commands.md tells
// users to run it.
func configureCompletion(c *cli.Command) {
	c.Hidden = false
	c.Category = groupSetUp
	c.Usage = "print the shell completion script for bash, zsh, fish or PowerShell"
	c.Description = "Prints a script that completes locum's commands and subcommands; source it from your shell's\n" +
		"startup file. bash's needs the bash-completion package, which minimal images such as Debian's\n" +
		"containers lack."
	c.Metadata = helpOf(commandHelp{examples: []string{"locum completion bash", "locum completion zsh", "locum completion fish"}})
	for _, shell := range c.Commands {
		shell.Usage = "print the " + shell.Name + " completion script"
		shell.Metadata = helpOf(commandHelp{examples: []string{"locum completion " + shell.Name}})
	}
}

func onUsageError(_ context.Context, cmd *cli.Command, err error, _ bool) error {
	return &usageError{cmd: cmd, err: flagError(err)}
}

// root is the repository root that holds the working directory.
func (e *env) root() (string, error) {
	wd, err := e.getwd()
	if err != nil {
		return "", err
	}
	return packs.FindRoot(wd)
}

// workspace finds the repository root from the working directory and composes its packs.
func (e *env) workspace() (*schema.Validator, *packs.Composition, error) {
	v, err := e.schemas()
	if err != nil {
		return nil, nil, err
	}
	root, err := e.root()
	if err != nil {
		return nil, nil, err
	}
	c, err := packs.Compose(v, root)
	if err != nil {
		return v, nil, withCode(exitCouldNot, err)
	}
	if c.User, err = e.userConfig(v); err != nil {
		return v, nil, withCode(exitCouldNot, err)
	}
	return v, c, nil
}

// userConfig reads the operator's config.json, if there is one.
func (e *env) userConfig(v *schema.Validator) (*packs.UserConfig, error) {
	dirs, err := packs.FindUserDirs(e.lookup)
	if err != nil {
		return nil, nil
	}
	return packs.LoadUserConfig(v, dirs)
}
