package rails

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseEndpoint(t *testing.T) {
	cases := []struct {
		raw    string
		remote bool
		want   string // normalised URL; "" means refused
		reason string // part of the refusal
	}{
		{raw: "http://127.0.0.1:1234/v1", want: "http://127.0.0.1:1234/v1"},
		{raw: "http://127.8.9.10:1234/v1", want: "http://127.8.9.10:1234/v1"},
		{raw: "http://localhost:11434/v1/", want: "http://localhost:11434/v1"},
		{raw: "http://[::1]:8080/v1", want: "http://[::1]:8080/v1"},
		{raw: "HTTP://LOCALHOST:1234/v1", want: "http://localhost:1234/v1"},
		{raw: "http://localhost.:1234/v1", want: "http://localhost:1234/v1"},
		{raw: "https://127.0.0.1/v1", want: "https://127.0.0.1/v1"},
		{raw: "http://127.0.0.1@example.com/v1", reason: "user name or password"},
		{raw: "http://user:pw@127.0.0.1/v1", reason: "user name or password"},
		{raw: "http://localhost.example.com/v1", reason: "is not localhost"},
		{raw: "http://0.0.0.0:1234/v1", reason: "every interface"},
		{raw: "http://[::]:1234/v1", reason: "every interface"},
		{raw: "http://[::ffff:127.0.0.1]:1234/v1", reason: "IPv4 address written as IPv6"},
		{raw: "http://2130706433/v1", reason: "shorthand"},
		{raw: "http://127.1/v1", reason: "shorthand"},
		{raw: "http://0x7f.1/v1", reason: "shorthand"},
		{raw: "http://0177.0.0.1/v1", reason: "shorthand"},
		{raw: "http://10.0.0.5:1234/v1", reason: "not a loopback address"},
		{raw: "http://example.com/v1", reason: "is not localhost"},
		{raw: "ftp://127.0.0.1/v1", reason: "scheme must be http or https"},
		{raw: "file:///etc/passwd", reason: "scheme must be http or https"},
		{raw: "127.0.0.1:1234", reason: "not a URL"},
		{raw: "http:///v1", reason: "no host"},
		{raw: "http://127.0.0.1:1234/v1?x=1", reason: "no query"},
		{raw: "http://127.0.0.1:99999/v1", reason: "port 99999 is not a port number"},
		{raw: "http://127.0.0.1:0/v1", reason: "port 0 is not a port number"},
		{raw: "http://127.0.0.1:01234/v1", reason: "port 01234 is not a port number"},
		{raw: "http://127.0.0.1:65535/v1", want: "http://127.0.0.1:65535/v1"},
		{raw: "http://[fe80::1%25eth0]:1234/v1", reason: "zone"},
		{raw: " http://127.0.0.1/v1", reason: "surrounding spaces"},
		{raw: "", reason: "non-empty"},
		{raw: "http://example.com:8080/v1", remote: true, want: "http://example.com:8080/v1"},
		{raw: "http://user@example.com/v1", remote: true, reason: "user name"},
	}
	for _, tc := range cases {
		t.Run(tc.raw, func(t *testing.T) {
			u, err := ParseEndpoint(tc.raw, tc.remote)
			if tc.want != "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, u.String())
				return
			}
			var ee *EndpointError
			require.True(t, errors.As(err, &ee), "want a refusal, got %v (%v)", err, u)
			assert.Contains(t, ee.Error(), tc.reason)
		})
	}
}

func TestLoopbackControlChecksTheResolvedAddress(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1:80":           true,
		"127.255.0.1:80":         true,
		"[::1]:80":               true,
		"[::ffff:127.0.0.1]:80":  true,
		"192.0.2.1:80":           false,
		"[2001:db8::1]:80":       false,
		"0.0.0.0:80":             false,
		"not-an-address":         false,
		"[::ffff:192.0.2.1]:443": false,
	}
	for addr, ok := range cases {
		err := loopbackControl("tcp", addr, nil)
		if ok {
			assert.NoError(t, err, addr)
		} else {
			var off *OffLoopbackError
			assert.True(t, errors.As(err, &off), addr)
		}
	}
}

func TestLoopbackDialerConnectsToLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	conn, err := LoopbackDialer(false)(context.Background(), "tcp", ln.Addr().String())
	require.NoError(t, err)
	conn.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	conn, err = LoopbackDialer(false)(context.Background(), "tcp4", net.JoinHostPort("localhost", port))
	require.NoError(t, err)
	conn.Close()
}

func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:1234/v1", "http://127.0.0.1@example.com", "http://[::ffff:127.0.0.1]", "http://2130706433", "HTTP://LOCALHOST.", "http://0x7f.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := ParseEndpoint(raw, false)
		if err != nil {
			return
		}
		// Whatever is accepted must name a loopback host and parse back to itself.
		host := u.Hostname()
		assert.Empty(t, loopbackProblem(host), "accepted %q with host %q", raw, host)
		again, err := ParseEndpoint(u.String(), false)
		require.NoError(t, err, "normalised %q from %q does not parse", u.String(), raw)
		assert.Equal(t, u.String(), again.String())
	})
}
