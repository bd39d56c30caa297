package main

import (
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
	"github.com/paraply/paraply/internal/status"
)

// TestListenStatusInUse: an --http address in use says so, and who: a
// paraply's status server there is named by its stream (the same stream
// started twice, most often), anything else is "another program".
func TestListenStatusInUse(t *testing.T) {
	cfg := replicate.Default()
	cfg.Name = "orders"
	srv := status.NewServer(replicate.New(cfg), metrics.NewWorkers(1))
	l, err := listenStatus("127.0.0.1:0", false)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(t.Context(), l) }()
	addr := l.Addr().String()
	_, err = listenStatus(addr, false)
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("a second listen on %s: %v, want EADDRINUSE", addr, err)
	}
	for _, want := range []string{"--http " + addr + ": the address is in use", `paraply stream "orders" serves its status there`, "paraply status --http " + addr, "started twice"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}

	other, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go func() { // accepts and closes: no HTTP there
		for {
			c, err := other.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, err = listenStatus(other.Addr().String(), false)
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "another program listens there") {
		t.Errorf("an address another program holds: %v", err)
	}
}
