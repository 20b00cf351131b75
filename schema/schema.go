// Package schema validates JSON documents against locum's contracts (package spec) and reports
// every problem as one line a person can act on: FILE: /json/pointer: what was expected, found.
package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/locumdev/locum/spec"
	"github.com/locumdev/locum/untrusted"
)

// Name is a schema's file name in package spec.
type Name string

// The contracts locum validates against.
const (
	Pack      Name = "pack.schema.json"
	Workspace Name = "workspace.schema.json"
	Result    Name = "result.schema.json"
	Routing   Name = "routing.schema.json"
	ABRecord  Name = "ab-record.schema.json"
	Config    Name = "config.schema.json"
	Symbols   Name = "symbols.schema.json"
	// BenchFolder is a bench folder's bench.json; BenchResult a bench's result, as locum bench
	// --json prints it.
	BenchFolder Name = "bench-folder.schema.json"
	BenchResult Name = "bench-result.schema.json"
)

const baseURL = "https://locum.dev/spec/"

// Validator compiles each schema the first time it is used: a short run that validates only a
// workspace file pays for one schema, not all, and a run that validates nothing pays for none. It
// is safe for concurrent use.
type Validator struct {
	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[Name]*jsonschema.Schema
	// docs are the raw schemas by URL, as the compiler loaded them, to read a failing keyword's
	// description from.
	docs map[string]any
}

// New returns a Validator over the schemas in spec.FS. It reads none of them yet: a process
// builds one at start and most commands validate one document or none.
func New() (*Validator, error) {
	v := &Validator{compiler: jsonschema.NewCompiler(), schemas: map[Name]*jsonschema.Schema{}, docs: map[string]any{}}
	v.compiler.UseLoader(specLoader{v})
	return v, nil
}

// specLoader serves the compiler the schemas of spec.FS, and nothing else: a $ref to any other URL
// is an error, never a fetch.
type specLoader struct{ v *Validator }

// Load is called with v.mu held (from schema, through Compile).
func (l specLoader) Load(url string) (any, error) {
	name, ok := strings.CutPrefix(url, baseURL)
	if !ok || strings.ContainsAny(name, "/#") {
		return nil, fmt.Errorf("%s is not one of locum's schemas", url)
	}
	data, err := fs.ReadFile(spec.FS, name)
	if err != nil {
		return nil, fmt.Errorf("reading embedded schema %s: %w", name, err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("embedded schema %s is not JSON: %w", name, err)
	}
	l.v.docs[url] = doc
	return doc, nil
}

func (v *Validator) schema(name Name) (*jsonschema.Schema, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if s, ok := v.schemas[name]; ok {
		return s, nil
	}
	s, err := v.compiler.Compile(baseURL + string(name))
	if err != nil {
		return nil, fmt.Errorf("compiling schema %s: %w", name, err)
	}
	v.schemas[name] = s
	return s, nil
}

// Problem is one reason a document is invalid.
type Problem struct {
	File    string
	Pointer string // JSON pointer into the document; "" is the whole document
	Message string
}

func (p Problem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "/"
	}
	return fmt.Sprintf("%s: %s: %s", untrusted.Escape(p.File), untrusted.Escape(capText(ptr)), untrusted.Escape(capText(p.Message)))
}

// capText shortens what a problem line quotes from a document: the document may be anyone's,
// and a line is for reading.
func capText(s string) string {
	const most = 300
	if len(s) <= most {
		return s
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d bytes more)", len(s)-cut)
}

// InvalidError lists every problem found in one document, sorted by pointer.
type InvalidError struct {
	File     string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// SyntaxError is a document that is not JSON, located by line and column (both 1-based).
type SyntaxError struct {
	File         string
	Line, Column int
	Reason       string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s: line %d, column %d: invalid JSON: %s", e.File, e.Line, e.Column, e.Reason)
}

// Decode parses data as one JSON value, numbers kept exact, and names the line and column of the
// first syntax error.
func Decode(file string, data []byte) (any, error) {
	// Nesting past untrusted.MaxDepth is refused before the document is decoded. A key named
	// twice would let two readers of one file see two documents (a signature checked on one
	// decoding, routes read from another); it is reported after a syntax error, which says more.
	keys := untrusted.CheckKeys(data)
	var deep *untrusted.DepthError
	if errors.As(keys, &deep) {
		return nil, &InvalidError{File: file, Problems: []Problem{{File: file, Pointer: deep.Pointer, Message: deep.Error()}}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, syntaxAt(file, data, int64(len(data)), "the file is empty")
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, syntaxAt(file, data, int64(len(data)), "unexpected end of input")
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, syntaxAt(file, data, se.Offset, se.Error())
		}
		return nil, &SyntaxError{File: file, Line: 1, Column: 1, Reason: err.Error()}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, syntaxAt(file, data, dec.InputOffset(), "unexpected data after the JSON value")
	}
	var dup *untrusted.DuplicateKeyError
	if errors.As(keys, &dup) {
		return nil, &InvalidError{File: file, Problems: []Problem{{File: file, Pointer: dup.At(), Message: dup.Error()}}}
	}
	return v, nil
}

// DecodeInto decodes data as Decode does (one JSON value, no key named twice) into v.
func DecodeInto(file string, data []byte, v any) error {
	if _, err := Decode(file, data); err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

func syntaxAt(file string, data []byte, offset int64, reason string) *SyntaxError {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	line, col := 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	// encoding/json reports the offset after the offending byte.
	if col > 1 && offset > 0 && data[offset-1] != '\n' && reason != "unexpected end of input" {
		col--
	}
	return &SyntaxError{File: file, Line: line, Column: col, Reason: reason}
}

// Validate decodes data and checks it against the named schema. It returns the decoded value, a
// *SyntaxError, or an *InvalidError naming every problem.
func (v *Validator) Validate(name Name, file string, data []byte) (any, error) {
	doc, err := Decode(file, data)
	if err != nil {
		return nil, err
	}
	return doc, v.ValidateValue(name, file, doc)
}

// ValidateValue checks an already decoded value (as Decode returns it) against the named schema.
func (v *Validator) ValidateValue(name Name, file string, doc any) error {
	s, err := v.schema(name)
	if err != nil {
		return err
	}
	err = s.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: validating: %w", file, err)
	}
	printer := message.NewPrinter(language.English)
	var problems []Problem
	seen := map[string]bool{}
	for _, leaf := range leaves(ve) {
		p := Problem{File: file, Pointer: pointer(leaf.InstanceLocation), Message: v.message(leaf, printer)}
		if key := p.String(); !seen[key] {
			seen[key] = true
			problems = append(problems, p)
		}
	}
	sort.SliceStable(problems, func(i, j int) bool { return problems[i].Pointer < problems[j].Pointer })
	return &InvalidError{File: file, Problems: problems}
}

// message says what was expected and what was found. A pattern is hard to read, so where the
// schema describes the value in words, the words are used instead; a key the object does not
// take is told with the keys it does.
func (v *Validator) message(e *jsonschema.ValidationError, printer *message.Printer) string {
	switch k := e.ErrorKind.(type) {
	case *kind.Pattern:
		if desc, _ := v.node(e.SchemaURL)["description"].(string); desc != "" {
			return fmt.Sprintf("want %s; found %q", strings.TrimSuffix(lowerFirst(desc), "."), k.Got)
		}
	case *kind.AdditionalProperties:
		if keys := v.namedKeys(e.SchemaURL); len(keys) > 0 {
			return fmt.Sprintf("%s; allowed: '%s'", k.LocalizedString(printer), strings.Join(keys, "', '"))
		}
	}
	return e.ErrorKind.LocalizedString(printer)
}

// namedKeys are the keys the object schema at url names, sorted; none where it also takes keys
// by pattern, which a list would leave out.
func (v *Validator) namedKeys(url string) []string {
	node := v.node(url)
	if _, patterns := node["patternProperties"]; patterns {
		return nil
	}
	props, _ := node["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// node returns the schema object at url (document URL#json-pointer), nil where there is none.
func (v *Validator) node(url string) map[string]any {
	docURL, frag, _ := strings.Cut(url, "#")
	v.mu.Lock()
	node := v.docs[docURL]
	v.mu.Unlock()
	for _, tok := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch n := node.(type) {
		case map[string]any:
			node = n[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil
			}
			node = n[i]
		default:
			return nil
		}
	}
	obj, _ := node.(map[string]any)
	return obj
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// leaves returns the errors that say what is wrong, skipping the wrappers that only say where in
// the schema the walk went.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		switch e.ErrorKind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference:
			return nil
		}
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// pointer renders a JSON pointer per RFC 6901.
func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}
