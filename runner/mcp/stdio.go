package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the transport of `locum mcp`: newline-delimited JSON read from r and written to w.
// When r ends it waits for the answers to the requests it has read before it reports the end (or
// until ctx ends), so a host or a script that sends its requests and closes stdin still gets
// every answer, and a transform in flight still restores its file.
func Stdio(ctx context.Context, r io.Reader, w io.Writer) sdk.Transport {
	p := &pending{ids: map[string]bool{}, idle: make(chan struct{})}
	close(p.idle)
	return &sdk.IOTransport{
		Reader: &drainReader{ctx: ctx, r: r, p: p},
		Writer: &answerWriter{w: w, p: p},
	}
}

// pending is the set of request ids read and not yet answered.
type pending struct {
	mu   sync.Mutex
	ids  map[string]bool
	idle chan struct{} // closed while ids is empty
}

// wire is the part of a JSON-RPC message that says whether it asks or answers.
type wire struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// line notes one message: a request adds its id; an answer, or the client's cancellation of a
// request (which the server does not answer), removes it.
func (p *pending) line(data []byte, outgoing bool) {
	var m wire
	if json.Unmarshal(data, &m) != nil {
		return
	}
	id, reqID := idKey(m.ID), idKey(m.Params.RequestID)
	p.mu.Lock()
	defer p.mu.Unlock()
	was := len(p.ids)
	switch {
	case outgoing && m.Method == "" && id != "":
		delete(p.ids, id)
	case !outgoing && m.Method == "notifications/cancelled" && reqID != "":
		delete(p.ids, reqID)
	case !outgoing && m.Method != "" && id != "":
		p.ids[id] = true
	}
	switch {
	case was == 0 && len(p.ids) > 0:
		p.idle = make(chan struct{})
	case was > 0 && len(p.ids) == 0:
		close(p.idle)
	}
}

// idKey names a request id the same way however it was spelled: 1, 1.0 and 1e0 are one number,
// and a string stays a string. "" for no id, or one that is neither.
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		return strconv.Quote(x)
	}
	return ""
}

func (p *pending) waitIdle() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.idle
}

// lines splits a stream into whole lines for note, keeping a partial one for the next call.
type lines struct{ buf []byte }

func (l *lines) feed(data []byte, note func([]byte)) {
	l.buf = append(l.buf, data...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return
		}
		note(l.buf[:i])
		l.buf = l.buf[i+1:]
	}
}

type drainReader struct {
	ctx context.Context
	r   io.Reader
	p   *pending
	l   lines
}

func (d *drainReader) Read(b []byte) (int, error) {
	n, err := d.r.Read(b)
	d.l.feed(b[:n], func(line []byte) { d.p.line(line, false) })
	if err == io.EOF {
		if len(bytes.TrimSpace(d.l.buf)) > 0 {
			d.p.line(d.l.buf, false)
			d.l.buf = nil
		}
		if n > 0 {
			return n, nil
		}
		select {
		case <-d.p.waitIdle():
		case <-d.ctx.Done():
		}
	}
	return n, err
}

func (d *drainReader) Close() error { return nil }

type answerWriter struct {
	mu sync.Mutex
	w  io.Writer
	p  *pending
	l  lines
}

func (a *answerWriter) Write(b []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, err := a.w.Write(b)
	a.l.feed(b[:n], func(line []byte) { a.p.line(line, true) })
	return n, err
}

func (a *answerWriter) Close() error { return nil }
