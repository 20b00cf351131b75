package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// A mode's details are its own part of a run's result and of its journal's run_end: a struct the
// mode declares (transform.Details, AgentDetails, ...), its JSON tags the keys, which its steps and
// guards fill through the pointer the mode gives Run.SetDetails. A reader in the process takes the
// struct back from Result.Details; a reader of a journal decodes run_end's with DecodeDetails into
// the same type, so writer and reader name a key through one declaration. A type a reader outside
// the mode decodes lives here; the rest in their mode's package.
//
// The object's keys are sorted as encoding/json sorts a map's, as a journal line's are, whatever
// the order the fields are declared in, so the object's shape depends on its keys alone; a nested
// object keeps its own type's order.
// Its fields follow encoding/json's rules: a tag's name, omitempty and omitzero, "-", and an
// embedded struct's fields written as the embedding struct's own. So a key a mode writes only
// where something happened has omitempty, a pointer where its value may be zero, and a pointer
// to a pointer where it may be null; a list that may be empty has omitzero; and keys written
// together are one embedded pointer, none of them written while it is nil.

// SpanDetails are the file and span a mode read (transform, summarize, verify-check), once it
// read them: Symbol where the span was named by its declaration.
type SpanDetails struct {
	File   string `json:"file,omitempty"`
	Lines  string `json:"lines,omitempty"`
	Symbol string `json:"symbol,omitempty"`
}

// span gives the SpanDetails of any details that embed them (SpanOf).
func (s SpanDetails) span() SpanDetails { return s }

// SpanOf is the span details name: the zero SpanDetails where their type embeds none, or they are
// nil. A layer above the modes reads the file a mode that edits in place edited through it,
// without importing the mode.
func SpanOf(details any) SpanDetails {
	if s, ok := details.(interface{ span() SpanDetails }); ok {
		return s.span()
	}
	return SpanDetails{}
}

// StrengthDetails are how many mutants of a kept change the verify rejected, as the result's
// verify_strength says it (K/N, or ?), in words for the outcome line, and the mutants it did not
// reject; written where they were measured (transform, verify-check, a workflow's final verify).
type StrengthDetails struct {
	VerifyStrength string   `json:"verify_strength,omitempty"`
	StrengthWords  string   `json:"strength_words,omitempty"`
	Survivors      []string `json:"survivors,omitempty"`
}

// ShownDetails are what a green verify showed by the baseline (Shown: fixed or held), written
// with a kept change where the baseline ran (transform, agent).
type ShownDetails struct {
	Shown string `json:"shown,omitempty"`
}

// AgentDetails are an agent run's details. Every key is written, null where unused, from the
// run's first step; Shown only where the baseline ran and the run committed.
type AgentDetails struct {
	// Status is the run's closed status (agent.Statuses).
	Status *string `json:"status"`
	// Branch is the run's branch where it was kept; Worktree the worktree's path where --keep kept it.
	Branch   *string `json:"branch"`
	Worktree *string `json:"worktree"`
	// Base is the commit the branch started at; Commit the run's commit on it.
	Base         *string  `json:"base"`
	Commit       *string  `json:"commit"`
	FilesChanged []string `json:"files_changed"`
	DiffStat     *string  `json:"diff_stat"`
	// Turns counts the model's requests.
	Turns        int           `json:"turns"`
	Usage        AgentUsage    `json:"usage"`
	VerifyRounds []VerifyRound `json:"verify_rounds"`
	VerifyTail   *string       `json:"verify_tail"`
	// Summary is what the model said with finish.
	Summary *string `json:"summary"`
	// VerifyUndone are the files a verify changed that a commit could take, put back after it.
	VerifyUndone []string `json:"verify_undone"`
	ShownDetails
}

// AgentUsage sums an agent's tokens over its turns, each nil where a reply did not report it.
type AgentUsage struct {
	InTokens  *int64 `json:"in_tokens"`
	OutTokens *int64 `json:"out_tokens"`
}

// VerifyRound is an agent's verify after finish: Exit is nil where the verify did not exit.
type VerifyRound struct {
	Round   int    `json:"round"`
	Verdict string `json:"verdict"`
	Exit    *int   `json:"exit"`
}

// journalShortened is details of which the journal keeps less than the result holds (a screen's
// million pairs): run_end keeps JournalDetails in their place.
type journalShortened interface {
	JournalDetails() any
}

// DecodeDetails reads a run_end's details as D, a mode's details type: the zero D where there are
// none. A value of another JSON type than D's field is left zero, as the rest is still read, and
// a key a journal does not have is zero: a journal is the repository's file, and an older locum's.
func DecodeDetails[D any](raw json.RawMessage) D {
	var d D
	if len(raw) == 0 {
		return d
	}
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(raw, &d); err != nil && !errors.As(err, &typeErr) {
		var zero D
		return zero
	}
	return d
}

// detailField is one key of a details type: where its value is, and when it is left out.
type detailField struct {
	name      string
	index     []int
	omitEmpty bool
	omitZero  bool
}

var detailFieldCache sync.Map // reflect.Type -> []detailField

// detailFields are the keys of struct type t, sorted. A key named twice is a programming error
// (encoding/json would drop both, silently).
func detailFields(t reflect.Type) []detailField {
	if f, ok := detailFieldCache.Load(t); ok {
		return f.([]detailField)
	}
	var fields []detailField
	collectFields(t, nil, &fields)
	slices.SortStableFunc(fields, func(a, b detailField) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(fields); i++ {
		if fields[i].name == fields[i-1].name {
			panic(fmt.Sprintf("engine: the details %s name the key %q twice", t, fields[i].name))
		}
	}
	detailFieldCache.Store(t, fields)
	return fields
}

func collectFields(t reflect.Type, index []int, out *[]detailField) {
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		at := append(slices.Clone(index), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				collectFields(ft, at, out)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		f := detailField{name: name, index: at}
		if f.name == "" {
			f.name = sf.Name
		}
		for o := range strings.SplitSeq(opts, ",") {
			switch o {
			case "omitempty":
				f.omitEmpty = true
			case "omitzero":
				f.omitZero = true
			case "string":
				panic(fmt.Sprintf("engine: the details %s give %s the string option, which they do not write", t, sf.Name))
			}
		}
		*out = append(*out, f)
	}
}

// value is the field's value in v, false where an embedded pointer on the way is nil.
func (f detailField) value(v reflect.Value) (reflect.Value, bool) {
	for n, i := range f.index {
		if n > 0 {
			if v.Kind() == reflect.Pointer {
				if v.IsNil() {
					return reflect.Value{}, false
				}
				v = v.Elem()
			}
		}
		v = v.Field(i)
	}
	return v, true
}

type isZeroer interface{ IsZero() bool }

// omitted says the field is left out, as encoding/json leaves it.
func (f detailField) omitted(v reflect.Value) bool {
	if f.omitEmpty {
		switch v.Kind() {
		case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
			if v.Len() == 0 {
				return true
			}
		case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
			reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
			if v.IsZero() {
				return true
			}
		}
	}
	if f.omitZero {
		switch {
		case (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil():
			return true
		case v.Type().Implements(reflect.TypeFor[isZeroer]()):
			return v.Interface().(isZeroer).IsZero()
		case v.CanAddr() && v.Addr().Type().Implements(reflect.TypeFor[isZeroer]()):
			return v.Addr().Interface().(isZeroer).IsZero()
		default:
			return v.IsZero()
		}
	}
	return false
}

// detailsStruct is the struct d points at; false where d is nil.
func detailsStruct(d any) (reflect.Value, bool) {
	v := reflect.ValueOf(d)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return reflect.Value{}, false
	}
	return v.Elem(), true
}

// hasDetails says d writes at least one key: details whose every key is left out are none.
func hasDetails(d any) bool {
	v, ok := detailsStruct(d)
	if !ok {
		return false
	}
	for _, f := range detailFields(v.Type()) {
		if fv, ok := f.value(v); ok && !f.omitted(fv) {
			return true
		}
	}
	return false
}

// encodeDetails is d as one JSON object, as run_end keeps it; nil (null) where d is none.
func encodeDetails(d any) (json.RawMessage, error) {
	if !hasDetails(d) {
		return nil, nil
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	if err := writeDetails(w, d); err != nil {
		return nil, err
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// writeDetails writes d, a pointer to a mode's details struct, as one JSON object: its keys
// sorted, each list an element at a time.
func writeDetails(w *bufio.Writer, d any) error {
	v, ok := detailsStruct(d)
	if !ok {
		_, err := w.WriteString("null")
		return err
	}
	w.WriteByte('{')
	n := 0
	for _, f := range detailFields(v.Type()) {
		fv, ok := f.value(v)
		if !ok || f.omitted(fv) {
			continue
		}
		if n > 0 {
			w.WriteByte(',')
		}
		n++
		name, _ := json.Marshal(f.name)
		w.Write(name)
		w.WriteByte(':')
		if err := writeValue(w, fv); err != nil {
			return fmt.Errorf("details key %s: %w", f.name, err)
		}
	}
	return w.WriteByte('}')
}

var marshalerType = reflect.TypeFor[json.Marshaler]()

// writeValue writes one detail as json.Marshal would; a list (not a byte slice, which JSON gives
// as base64, nor one that marshals itself) one element at a time.
func writeValue(w *bufio.Writer, v reflect.Value) error {
	if v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Slice || v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 ||
		v.Type().Implements(marshalerType) {
		return writeMarshaled(w, v)
	}
	w.WriteByte('[')
	for i := range v.Len() {
		if i > 0 {
			w.WriteByte(',')
		}
		if err := writeMarshaled(w, v.Index(i)); err != nil {
			return err
		}
	}
	return w.WriteByte(']')
}

// writeMarshaled writes v through json.Marshal, by its address where it has one, so a method
// MarshalJSON has on the pointer applies as it does to a field of a struct marshaled by pointer.
func writeMarshaled(w *bufio.Writer, v reflect.Value) error {
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	data, err := json.Marshal(x)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
