package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"time"
)

// startProfiles starts the profiles asked for in the environment: a CPU
// profile of the whole command to cpuPath, and the heap at its peak to
// heapPath (none when a path is ""). The benchmark sets them to keep a
// profile of every run beside its results. The returned function ends
// them.
func startProfiles(cpuPath, heapPath string) (func(), error) {
	stopCPU, err := startCPUProfile(cpuPath)
	if err != nil {
		return nil, err
	}
	stopHeap := startHeapProfile(heapPath)
	return func() {
		stopHeap()
		stopCPU()
	}, nil
}

func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("PARAPLY_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("PARAPLY_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// startHeapProfile samples the heap every half second and writes its
// profile to path each time it is the largest seen: what a run holds at
// its peak (at exit the window has drained, so a final profile would
// show little).
func startHeapProfile(path string) func() {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		var peak uint64
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse <= peak {
				continue
			}
			peak = ms.HeapInuse
			if f, err := os.Create(path); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				f.Close()
			}
		}
	}()
	return func() {
		close(done)
		<-stopped
	}
}
