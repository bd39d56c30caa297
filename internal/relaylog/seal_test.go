package relaylog

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"
)

// TestSealEndsReaders: a reader at the end of a sealed log gets io.EOF, a
// reader already waiting there is woken with it, and a reader behind the
// end still reads every entry first.
func TestSealEndsReaders(t *testing.T) {
	l := openLog(t, Options{Dir: t.TempDir()})
	appendAll(t, l, smallRecords(t, 3))
	behind := l.NewReader(1)
	waiting := l.NewReader(4)
	got := make(chan error, 1)
	go func() {
		_, err := waiting.Next(context.Background())
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("a reader past the end of an open log returned %v instead of waiting", err)
	case <-time.After(50 * time.Millisecond):
	}
	l.Seal()
	select {
	case err := <-got:
		if !errors.Is(err, io.EOF) {
			t.Fatalf("waiting reader after Seal: %v, want io.EOF", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a reader waiting at the end of the log was not woken by Seal")
	}
	for i := uint64(1); i <= 3; i++ {
		e, err := behind.Next(context.Background())
		if err != nil || e.Index != i {
			t.Fatalf("entry %d of a sealed log: %v, %v", i, e, err)
		}
	}
	if _, err := behind.Next(context.Background()); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last entry of a sealed log: %v, want io.EOF", err)
	}
}
