package rails

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// EndpointError is an endpoint the loopback rail refuses. It is a refusal before any request.
type EndpointError struct {
	URL    string
	Reason string
	// OffLoopback is a host off this machine: the message then says how the operator allows one.
	OffLoopback bool
}

func (e *EndpointError) Error() string { return e.Words(FlagName) }

// Words is the message with the operator's setting named by name.
func (e *EndpointError) Words(name func(string) string) string {
	msg := fmt.Sprintf("refusing endpoint %q: %s", e.URL, e.Reason)
	if e.OffLoopback {
		msg += fmt.Sprintf("; leave loopback (%s, LOCUM_ALLOW_REMOTE=1, or allow_remote in your user config) only if sending workspace text to that host is a decision you have made", name("allow_remote"))
	}
	return msg
}

// ParseEndpoint checks a base URL against the loopback rail and returns it normalised (scheme and
// host in lower case, a host's trailing dot removed, no trailing slash). Without allowRemote the
// host must be 127.0.0.0/8 written as a dotted quad, localhost, or [::1]; spellings that some
// resolvers read as loopback and others do not (127.1, 2130706433, 0x7f.1, ::ffff:127.0.0.1) are
// refused rather than guessed at. The dialer checks again, on the address a name resolves to.
func ParseEndpoint(raw string, allowRemote bool) (*url.URL, error) {
	fail := func(format string, args ...any) (*url.URL, error) {
		return nil, &EndpointError{URL: raw, Reason: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(raw) != raw || raw == "" {
		return fail("a base URL must be non-empty, with no surrounding spaces")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fail("not a URL: %v", err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return fail("the scheme must be http or https, not %q", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return fail("no host; write it like http://127.0.0.1:1234/v1")
	}
	if u.User != nil {
		return fail("a user name or password in the URL (before @) hides the real host; remove it")
	}
	if u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
		return fail("a base URL takes no query or fragment")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	port := u.Port()
	if host == "" {
		return fail("no host; write it like http://127.0.0.1:1234/v1")
	}
	if strings.Contains(u.Host, "%") {
		return fail("an IPv6 zone is not allowed in a base URL")
	}
	if port != "" {
		// url.Parse takes any digits; a dialer would fail later with a less useful message.
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 || (len(port) > 1 && port[0] == '0') {
			return fail("port %s is not a port number from 1 to 65535", port)
		}
	}
	if !allowRemote {
		if reason := loopbackProblem(host); reason != "" {
			return nil, &EndpointError{URL: raw, Reason: reason, OffLoopback: true}
		}
	}
	if strings.Contains(host, ":") {
		u.Host = "[" + host + "]"
	} else {
		u.Host = host
	}
	if port != "" {
		u.Host = net.JoinHostPort(strings.Trim(u.Host, "[]"), port)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// loopbackProblem says why host is not an accepted loopback spelling, or "" when it is.
func loopbackProblem(host string) string {
	if host == "localhost" {
		return ""
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		switch {
		case addr.Is4() && addr.IsLoopback():
			return ""
		case addr == netip.IPv6Loopback():
			return ""
		case addr.Is4In6() && addr.Unmap().IsLoopback():
			return fmt.Sprintf("%s is an IPv4 address written as IPv6; write 127.0.0.1 or [::1]", host)
		case addr.IsUnspecified():
			return fmt.Sprintf("%s means every interface, not this machine's loopback; write 127.0.0.1", host)
		}
		return fmt.Sprintf("%s is not a loopback address (127.0.0.0/8 or ::1)", host)
	}
	if looksNumeric(host) {
		return fmt.Sprintf("%q is a shorthand for an IPv4 address that resolvers read differently; write the full dotted quad, such as 127.0.0.1", host)
	}
	return fmt.Sprintf("%q is not localhost, 127.0.0.0/8 or [::1]", host)
}

// looksNumeric reports a host made only of digits, dots and hex markers: 127.1, 2130706433,
// 0x7f000001, 0177.0.0.1. inet_aton accepts these; net/netip does not.
func looksNumeric(host string) bool {
	for _, part := range strings.Split(host, ".") {
		p := strings.TrimPrefix(part, "0x")
		if p == "" {
			continue
		}
		for _, r := range p {
			if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
				return false
			}
		}
		if p == part && strings.ContainsAny(p, "abcdef") {
			return false
		}
	}
	return true
}

// IsLoopback reports whether an address this machine would connect to is loopback.
func IsLoopback(addr netip.Addr) bool {
	return addr.Unmap().IsLoopback()
}
