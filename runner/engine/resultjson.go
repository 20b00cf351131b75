package engine

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
)

// resultFields is a Result marshaled field by field, as encoding/json does by default.
type resultFields Result

// WriteJSON writes r as json.Marshal would, and a line break, without holding the whole text:
// each list of the details (a screen's million pairs) is written an element at a time, so the
// memory it takes is the largest element's, not the list's.
func (r *Result) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := r.write(bw); err != nil {
		return err
	}
	bw.WriteByte('\n')
	return bw.Flush()
}

// MarshalJSON writes the result as WriteJSON does: the details' keys sorted, whatever the order
// the mode's type declares them in.
func (r Result) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	if err := r.write(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (r *Result) write(bw *bufio.Writer) error {
	head := resultFields(*r)
	head.Details = nil
	data, err := json.Marshal(&head)
	if err != nil {
		return err
	}
	// The head ends in "details":null}; the details follow in its place.
	cut := bytes.LastIndex(data, []byte(`"details":null}`))
	if !hasDetails(r.Details) || cut < 0 {
		_, err := bw.Write(data)
		return err
	}
	bw.Write(data[:cut])
	bw.WriteString(`"details":`)
	if err := writeDetails(bw, r.Details); err != nil {
		return err
	}
	return bw.WriteByte('}')
}
