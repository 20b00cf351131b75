package rails

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync/atomic"
	"syscall"
	"time"
)

// OffLoopbackError is a connection the dialer refused because the address it would reach is
// not loopback.
type OffLoopbackError struct {
	Address string
}

func (e *OffLoopbackError) Error() string {
	return fmt.Sprintf("refusing to connect to %s: not a loopback address (a name that resolves off this machine is refused at dial time)", e.Address)
}

// DialFunc is the shape of net.Dialer.DialContext.
type DialFunc func(ctx context.Context, network, address string) (net.Conn, error)

// LoopbackDialer dials only loopback addresses unless allowRemote. The check runs in the
// dialer's Control hook, on the address actually being connected to after name resolution, so a
// name such as localhost.example.com that resolves elsewhere is stopped before its socket
// connects.
func LoopbackDialer(allowRemote bool) DialFunc {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !allowRemote {
		d.Control = loopbackControl
	}
	return d.DialContext
}

// loopbackControl runs after name resolution and before connect(2): no packet leaves for an
// address it refuses.
func loopbackControl(_, address string, _ syscall.RawConn) error {
	return CheckDialAddress(address)
}

// CheckDialAddress is the dial-time check: the resolved address must be loopback.
func CheckDialAddress(address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !IsLoopback(ap.Addr()) {
		return &OffLoopbackError{Address: address}
	}
	return nil
}

// ErrNetworkForbidden is what NoNetworkDialer returns: the offline checks run with it, so any
// attempt to connect fails the check that made it.
var ErrNetworkForbidden = errors.New("network use is forbidden here")

// NoNetworkDialer refuses every connection and counts the attempts.
func NoNetworkDialer(attempts *atomic.Int64) DialFunc {
	return func(_ context.Context, network, address string) (net.Conn, error) {
		attempts.Add(1)
		return nil, fmt.Errorf("dial %s %s: %w", network, address, ErrNetworkForbidden)
	}
}
