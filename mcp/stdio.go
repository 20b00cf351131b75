package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Stdio is the transport of `locum mcp`: newline-delimited JSON read from r and written to w.
// When r ends it waits for the answers to the requests it has read before it reports the end (or
// until ctx ends), so a host or a script that sends its requests and closes stdin still gets
// every answer, and a transform in flight still restores its file.
//
// A line that is not one JSON-RPC message (not JSON, a batch, or over MaxLine bytes) is answered
// with a JSON-RPC error and dropped; the session goes on. The SDK would end it instead.
func Stdio(ctx context.Context, r io.Reader, w io.Writer) sdk.Transport {
	p := &pending{ids: map[string]bool{}, idle: make(chan struct{})}
	close(p.idle)
	out := &answerWriter{w: w, p: p}
	return &sdk.IOTransport{
		Reader: &drainReader{ctx: ctx, r: bufio.NewReaderSize(r, 64<<10), p: p, out: out},
		Writer: out,
	}
}

// MaxLine is the longest message locum mcp reads: far over any tool call a host sends, and a
// bound on what one line can cost.
const MaxLine = 16 << 20

// JSON-RPC's codes for a line that is not JSON and one that is no request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

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
	ctx   context.Context
	r     *bufio.Reader
	p     *pending
	out   *answerWriter
	ready []byte // the rest of the message being handed to the SDK
	eof   bool
}

// Read hands the SDK one checked message at a time. At the end of r it waits for the answers
// to what it read, then reports the end.
func (d *drainReader) Read(b []byte) (int, error) {
	for len(d.ready) == 0 {
		if d.eof {
			select {
			case <-d.p.waitIdle():
			case <-d.ctx.Done():
			}
			return 0, io.EOF
		}
		line, over, err := d.readLine()
		switch {
		case err == io.EOF:
			d.eof = true
		case err != nil:
			return 0, err
		}
		line = bytes.TrimSpace(line)
		switch {
		case over:
			d.out.refuse(codeInvalidRequest, fmt.Sprintf("a line over %d bytes; locum mcp reads no message that long", MaxLine))
		case len(line) == 0:
		case !json.Valid(line):
			d.out.refuse(codeParseError, "parse error: the line is not JSON")
		case line[0] == '[':
			d.out.refuse(codeInvalidRequest, "a batch; send one message a line")
		default:
			if _, err := jsonrpc.DecodeMessage(line); err != nil {
				d.out.refuse(codeInvalidRequest, "not a JSON-RPC request, notification or response: "+err.Error())
				continue
			}
			d.p.line(line, false)
			d.ready = append(line, '\n')
		}
	}
	n := copy(b, d.ready)
	d.ready = d.ready[n:]
	return n, nil
}

// readLine reads up to the next newline. A line over MaxLine is read to its end and dropped:
// over reports it, with nothing of it kept.
func (d *drainReader) readLine() (line []byte, over bool, err error) {
	for {
		chunk, err := d.r.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > MaxLine {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err != nil:
			return line, over, err
		}
		return line, over, nil
	}
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

// refuse answers a line that was no message with a JSON-RPC error whose id is null, as the
// specification has it for a request whose id could not be read.
func (a *answerWriter) refuse(code int, message string) {
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": message}})
	_, _ = a.Write(append(data, '\n'))
}
