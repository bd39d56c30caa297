package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"syscall"
	"time"

	"github.com/paraply/paraply/internal/status"
)

// listenStatus opens the --http address. One in use is most often another
// paraply's: the same stream started twice, or two streams on a host
// given one address. The error says which, asking the address's /metrics.
func listenStatus(addr string, allowRemote bool) (net.Listener, error) {
	l, err := status.Listen(addr, allowRemote)
	if err == nil || !errors.Is(err, syscall.EADDRINUSE) {
		return l, err
	}
	who := "another program listens there (perhaps another paraply)"
	if stream, ok := paraplyAt(addr); ok {
		who = fmt.Sprintf("paraply stream %q serves its status there (paraply status --http %s): is the stream started twice?", stream, addr)
	}
	return nil, fmt.Errorf("--http %s: the address is in use: %s. Each paraply on a host needs its own --http address: %w", addr, who, err)
}

// streamLabel finds a stream label in a paraply's /metrics.
var streamLabel = regexp.MustCompile(`(?m)^paraply_\w+\{(?:[^}]*,)?stream="([^"]*)"`)

// paraplyAt asks addr's /metrics whether a paraply serves there, and
// which stream.
func paraplyAt(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", false
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1" // a wildcard address answers on loopback too
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(host, port) + "/metrics")
	if err != nil {
		return "", false
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", false
	}
	m := streamLabel.FindSubmatch(body)
	if m == nil {
		return "", false
	}
	return string(m[1]), true
}
