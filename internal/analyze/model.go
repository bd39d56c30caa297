package analyze

import (
	"runtime"

	"github.com/paraply/paraply/internal/binlog"
)

// CostModel prices a transaction's apply in abstract time units: PerTxn for
// what every transaction pays plus PerRow for each row change, and Commit
// for each commit on the target, which Batch transactions may share. Only
// ratios matter: a speedup is the time of one worker over the time of N.
type CostModel struct {
	PerTxn float64 `json:"per_txn"`
	PerRow float64 `json:"per_row"`
	// PerStatement is what a statement-format DML statement costs: the
	// target parses, plans and runs it, as its source did, where a row
	// change is applied by key.
	PerStatement float64 `json:"per_statement"`
	// Commit is what one target transaction's commit adds: the round trip
	// and the wait for the log to reach the disk.
	Commit float64 `json:"per_commit"`
	// StatementWork is what a work holding statement-format transactions
	// adds, before its turn: paraply sets the source sessions' settings on
	// the target and the worker's back.
	StatementWork float64 `json:"per_statement_work"`
	// Batch is how many source transactions one target transaction may
	// apply (paraply's --batch-max-txns): consecutive ones, as paraply's
	// coordinator forms them (see simulator). 0 or 1: one each.
	Batch int `json:"batch_max_txns"`
	// Window is the transactions paraply looks ahead (replicate's
	// --window): with a backlog, the coordinator gives each of N workers
	// batches of at most Window/N.
	Window int `json:"window"`
	// PreserveOrder makes workers commit in source order, as paraply and
	// MySQL do by default: a worker stays busy until its turn to commit,
	// and commits follow one another.
	PreserveOrder bool `json:"preserve_commit_order"`
	// Cores is the target's CPU cores, shared by its sessions and by
	// paraply: the CPU the stream costs bounds the speedup (see
	// capacity). 0: unlimited, the speedup the dependencies and batching
	// alone allow.
	Cores int `json:"target_cores"`
	// StatementGain is the most that workers gain on statement-format
	// transactions, as paraply applies them today (see
	// DefaultCostModel); 0: no bound but the others.
	StatementGain float64 `json:"statement_gain"`
	// Capacity, when above 0, replaces the capacity the cores give: how
	// many transactions the target applies at once before they slow each
	// other down (workers keeping commit order use OrderedShare of it).
	Capacity float64 `json:"capacity,omitempty"`
}

// DefaultCostModel prices a row change at a quarter of a transaction's
// fixed cost and a commit at ten (on this project's durable two-core
// MariaDB target, sysbench write_only, four rows, applied by the native
// single thread at 2,420 transactions a second durable and 14,572 not: the
// commit's flush adds five times the transaction's own 0.07 ms), with
// replicate's defaults: batches of 512 in a window of 4,096, commit order
// preserved (the costs below were calibrated on batches of 256; at 512
// the predictions stayed within 20% of measured on ROW write_only and hot
// rows, bench/results/2026-11-29-batch512-predictions); and a target with
// as many cores as this machine (the binlogs are most often read on the
// source or a replica, sized as the target).
//
// A statement costs 2.2: the native single thread applied the same
// write_only backlog (four changes a transaction) at 1,032 transactions a
// second from a MIXED source and 2,353 from a ROW one, durable target
// (bench/results/2026-11-27-mixed-quick and 2026-11-27-durable-3rounds):
// 0.14 ms more for each statement than for its row change.
//
// A work of statements costs 40 more: paraply applied MIXED backlogs
// (sysbench write_only and hot rows, 10,000 transactions from 16 clients,
// 8 tables of 10,000 rows, durable two-core target; bench-replication
// -binlog-format MIXED, 2026-11-28, docs/analyze.md) 6.0 and 18 times
// as slowly without batching as in batches of 256, and 1.5-1.8 and
// 2.1-2.3 times as slowly in batches of 16 (ROW: 13 times as slowly
// without batching): with 40, the model gives 6.0, 16, 1.3 and 1.9.
//
// Workers gain at most 1.2 times one worker's speed on statements: on
// those MIXED backlogs, batches of 256, 2 to 16 writeset workers and
// --workers auto applied 0.95 to 1.30 (write_only) and 1.07 to 1.37 (hot
// rows) times as fast as one, once blocked heads started at once
// (2026-11-28, scheduler 2069f8f); before, 0.97 to 1.25 with the target's
// sessions mostly idle. The dependencies allowed 1.95 on hot rows, the
// cores 1.6: what holds statements is on paraply's side of the apply.
// Issue 40 changes that path; --statement-gain follows it.
var DefaultCostModel = CostModel{PerTxn: 1, PerRow: 0.25, PerStatement: 2.2, Commit: 10, StatementWork: 40, Batch: 512, Window: DefaultWindow,
	PreserveOrder: true, Cores: runtime.NumCPU(), StatementGain: 1.2}

// The CPU a unit of apply costs the machine the target shares with
// paraply (see capacity), in cores busy while one worker spends the unit.
//
// A row change keeps more than a core busy: the worker's session on the
// target, and beside it paraply's reading and decoding and the target's
// log writers. RowCPU is calibrated on this project's benchmark
// (bench/results/2026-11-26-predictions: sysbench write_only, hot rows and
// update_index from one client, a durable two-core MariaDB 10.11 target,
// paraply batching 256 transactions a commit), where 4 unordered workers
// applied 1.13 to 1.39 times as fast as one: one batching worker already
// kept 1.55 of the two cores busy, which the model gives as
// 2.04 / (2 x 0.65) for write_only (a transaction of 2 units and a 256th
// of a commit). A commit waits for the disk, but it also costs CPU: the
// binary log and redo writes and paraply's checkpoint row. CommitCPU is
// calibrated on runs without batching, where 8 unordered workers applied
// 2.3 to 3.0 times as fast as one (bench/results/2026-11-24-predictions):
// 2 cores x 12 / (2 x 1.57 + 10 x 0.58) = 2.7.
//
// A statement keeps about a core busy: the target's session parses, plans
// and runs it (0.50 ms of CPU for a write_only transaction of four), and
// paraply sends it as it came (issue 40 aims at 0.05 ms, from 0.32):
// StatementCPU is that estimate, (0.50 + 0.05) / 0.50, until the
// benchmark measures statements applied in parallel.
const (
	RowCPU       = 1.57
	StatementCPU = 1.1
	CommitCPU    = 0.58
)

// OrderedShare is the share of the target's capacity that workers keeping
// commit order use: each holds its open transaction until its turn, so
// part of the target's time is one worker waiting for another. Measured
// with RowCPU's runs: 4 and 16 ordered writeset workers applied 1.03 to
// 1.15 times as fast as one, unordered 1.13 to 1.39.
const OrderedShare = 0.85

// DefaultWindow is replicate's default --window (a test checks).
const DefaultWindow = 4096

// txnCost is what the simulation needs of a transaction: its apply time,
// the CPU that costs, and whether paraply applies it in a work of its own.
type txnCost struct {
	time, cpu  float64
	alone      bool
	statements bool
}

// price prices txn, which changes rows and runs statements
// (statement-format DML), under the model.
func (c CostModel) price(txn *binlog.Txn, rows, statements int) txnCost {
	k := txnCost{time: c.cost(rows, statements), statements: statements > 0}
	k.cpu = RowCPU * k.time
	if k.statements {
		k.cpu = StatementCPU * k.time
	}
	// As stage.Txn.Alone: DDL, a large transaction, one the source rolled
	// back, one that changes a non-transactional table.
	k.alone = txn.DDL || txn.Large || txn.RolledBack || txn.NonTransactional()
	return k
}

func (c CostModel) cost(rows, statements int) float64 {
	return c.PerTxn + c.PerRow*float64(rows) + c.PerStatement*float64(statements)
}

// batchFor is the batch size the coordinator gives each of workers with a
// backlog: Batch, but no more than the window spread over them.
func (c CostModel) batchFor(workers int) int {
	b := max(1, c.Batch)
	if c.Window > 0 {
		b = min(b, max(1, c.Window/workers))
	}
	return b
}

// capacity is how many times as fast as one worker the target can apply
// the work a simulator priced, its time on one worker t1 and its CPU
// cpu: its cores over the cores one worker keeps busy (cpu / t1), with
// commit order kept OrderedShare of that; never below 1. 0: unlimited.
func (c CostModel) capacity(ordered bool, t1, cpu float64) float64 {
	cp := c.Capacity
	if cp <= 0 {
		if c.Cores <= 0 || cpu <= 0 {
			return 0
		}
		cp = float64(c.Cores) * t1 / cpu
	}
	if ordered {
		cp *= OrderedShare
	}
	return max(1, cp)
}

// statementBound is how many times as fast as one worker workers apply
// work whose statements take share of one worker's time: StatementGain
// over that share (the rest is not bounded by it); 0: unbounded.
func (c CostModel) statementBound(share float64) float64 {
	if c.StatementGain <= 0 || share <= 0 {
		return 0
	}
	return max(1, c.StatementGain/min(1, share))
}
