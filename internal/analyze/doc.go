// Package analyze measures how parallel a binlog could be applied, offline:
// it runs the dependency tracker of every mode over the transactions of
// some binlog files, computes the critical path and a simulated speedup for
// several worker counts, counts what serialized the stream (barriers by
// cause, hot rows and tables), and words a recommendation.
//
// The simulation (see CostModel and simulator) applies as paraply does:
// batches of consecutive transactions on the first free worker, each
// transaction priced as a fixed cost plus a cost per row change or
// statement and each batch's commit at its own cost, commits in source
// order or (the unordered speedups) not; the CPU that costs on a target of
// CostModel.Cores cores caps the speedup, and each mode names what caps it
// (limit.go). It answers "how much faster could N workers be than one",
// not "how many seconds".
//
// Run reads the files as a stream in bounded memory: a goroutine reads and
// frames the events (prefetcher), the caller's decodes them and extracts
// writesets, and each mode measures in a goroutine of its own
// (modeRunner); what the modes remember is bounded (see docs/analyze.md).
package analyze
