// Package faults is a test harness, not part of paraply itself: only tests
// import it (cmd/paraply's soak, security and relay damage tests, and so
// make test and make soak). The paraply binary never imports it.
//
// It injects the faults and bad inputs of paraply's reliability tests into
// real processes: a TCP proxy between paraply and a server that cuts,
// stalls or slows connections (Proxy); a counter workload
// whose totals prove that no committed transaction was lost or applied
// twice, even across source crashes (Counter); a sysbench load that keeps
// running across them (SysbenchLoad); a restartable paraply process
// (Process); damage to relay log segments; and the soak that combines them
// with server kills and restarts and reports per fault (Soak, WriteTable).
//
// Everything runs on loopback against sandbox servers; processes are
// stopped by their PID only.
package faults
