package rails

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/locumdev/locum/untrusted"
)

// BudgetError is input over the byte ceiling. It is a refusal before any request.
type BudgetError struct {
	What  string // "prompt", or a file's name
	Size  int64  // -1 when only "more than Limit" is known
	Limit int64
	// Remedy replaces the default advice (narrow the span with --lines); it may name settings
	// as {setting}, each front end wording them its own way (Words).
	Remedy string
}

func (e *BudgetError) Error() string { return e.Words(FlagName) }

// Words is the message with each setting named by name: FlagName on the command line
// (--max-input-bytes), a tool call's argument over MCP (max_input_bytes).
func (e *BudgetError) Words(name func(setting string) string) string {
	remedy := Words(e.Remedy, name)
	if remedy == "" {
		remedy = "narrow it with " + name("lines") + " A-B"
	}
	if e.Size < 0 {
		return fmt.Sprintf("%s is over the input budget of %d bytes (%s); %s, or raise the budget only as far as the model's context holds", e.What, e.Limit, name("max_input_bytes"), remedy)
	}
	return fmt.Sprintf("%s is %d bytes, over the input budget of %d bytes (%s); %s, or raise the budget only as far as the model's context holds",
		e.What, e.Size, e.Limit, name("max_input_bytes"), remedy)
}

// Worded is an error whose message names settings, so each front end can word it in its own
// terms: the CLI's flags, or an MCP tool's arguments.
type Worded interface {
	error
	Words(name func(setting string) string) string
}

// FlagName is a setting as the command line names it: max_input_bytes is --max-input-bytes.
func FlagName(setting string) string { return "--" + strings.ReplaceAll(setting, "_", "-") }

// CheckBudget refuses size over limit.
func CheckBudget(what string, size, limit int64) error {
	if size > limit {
		return &BudgetError{What: what, Size: size, Limit: limit}
	}
	return nil
}

// FileError is a file locum will not read as text: missing, not a regular file, binary, or not
// UTF-8. It is bad input (exit 2).
type FileError struct {
	Path   string
	Reason string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %s", untrusted.Escape(e.Path), e.Reason) }

// ReadTextFile reads a UTF-8 text file under the budget: its size on disk is checked before it is
// read, so an oversized file is refused without loading it, and its bytes are checked again after
// (a file can grow between the two). limit <= 0 means no budget.
func ReadTextFile(path string, limit int64) ([]byte, error) {
	st, err := regularFile(path)
	if err != nil {
		return nil, err
	}
	if limit > 0 {
		if err := CheckBudget(path, st.Size(), limit); err != nil {
			return nil, err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	defer f.Close()
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	if limit > 0 {
		if err := CheckBudget(path, int64(len(data)), limit); err != nil {
			return nil, err
		}
	}
	if reason := textProblem(data, 0); reason != "" {
		return nil, &FileError{Path: path, Reason: reason}
	}
	return data, nil
}

// regularFile is path's file information, where it is a regular file or a symbolic link to one:
// checked before the file is opened, so a FIFO cannot block the open.
func regularFile(path string) (fs.FileInfo, error) {
	st, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &FileError{Path: path, Reason: "no such file"}
		}
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	if st.Mode()&fs.ModeSymlink != 0 {
		if st, err = os.Stat(path); err != nil {
			return nil, &FileError{Path: path, Reason: "a symbolic link to nothing"}
		}
	}
	if !st.Mode().IsRegular() {
		return nil, &FileError{Path: path, Reason: "not a regular file"}
	}
	return st, nil
}

// textProblem says why data, read from offset base of its file, is not UTF-8 text, or "".
func textProblem(data []byte, base int64) string {
	for i, b := range data {
		if b == 0 {
			return fmt.Sprintf("binary (a NUL byte at offset %d)", base+int64(i))
		}
	}
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n <= 1 {
				return fmt.Sprintf("not UTF-8 (an invalid byte at offset %d)", base+int64(i))
			}
			i += n
		}
	}
	return ""
}
