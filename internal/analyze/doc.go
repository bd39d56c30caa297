// Package analyze measures how parallel a binlog could be applied, offline:
// it runs the dependency tracker of every mode over the transactions of
// some binlog files, computes the critical path and a simulated speedup for
// several worker counts, counts what serialized the stream (barriers by
// cause, hot rows and tables), and words a recommendation.
//
// The simulation (see CostModel and simulator) prices each transaction as a
// fixed cost plus a cost per row change and dispatches in source order to
// the first free worker, committing in source order; it answers "how much
// faster could N workers be", not "how many seconds".
package analyze
