package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"slices"
)

// WriteJSON writes r as json.Marshal would, and a line break, without holding the whole text:
// each list of the details (a screen's million pairs) is written an element at a time, so the
// memory it takes is the largest element's, not the list's.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	head := *r
	head.Details = nil
	data, err := json.Marshal(&head)
	if err != nil {
		return err
	}
	// The head ends in "details":null}; the details follow in its place.
	cut := bytes.LastIndex(data, []byte(`"details":null}`))
	if r.Details == nil || cut < 0 {
		bw.Write(data)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	bw.Write(data[:cut])
	bw.WriteString(`"details":{`)
	keys := make([]string, 0, len(r.Details))
	for k := range r.Details {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for n, k := range keys {
		if n > 0 {
			bw.WriteByte(',')
		}
		name, _ := json.Marshal(k)
		bw.Write(name)
		bw.WriteByte(':')
		if err := writeValue(bw, r.Details[k]); err != nil {
			return err
		}
	}
	bw.WriteString("}}\n")
	return bw.Flush()
}

// writeValue writes one detail; a list (not a byte slice, which JSON gives as base64) one
// element at a time.
func writeValue(w *bufio.Writer, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice || rv.IsNil() || rv.Type().Elem().Kind() == reflect.Uint8 {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	w.WriteByte('[')
	for i := range rv.Len() {
		if i > 0 {
			w.WriteByte(',')
		}
		data, err := json.Marshal(rv.Index(i).Interface())
		if err != nil {
			return err
		}
		w.Write(data)
	}
	return w.WriteByte(']')
}
