package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Kind is who applies a backlog in a run.
type Kind string

const (
	// Native is MariaDB's own replica (SQL thread, parallel or not).
	Native Kind = "native"
	// Paraply is `paraply replicate --until-caught-up`.
	Paraply Kind = "paraply"
	// Ceiling is sysbench run directly against the target with
	// CeilingClients clients: what the target can commit at most.
	Ceiling Kind = "ceiling"
	// MariadbBinlog is point-in-time recovery the standard way:
	// `mariadb-binlog FILES | mariadb` on the target, one session.
	MariadbBinlog Kind = "mariadb-binlog"
	// ParaplyApply is point-in-time recovery with `paraply apply
	// --start-gtid <before> FILES` on the target.
	ParaplyApply Kind = "apply"
)

const (
	// DefaultBatch is paraply's default --batch-max-txns (results before
	// 2026-11-22 06:40 UTC used 16 here, and results before 2026-11-26
	// 22:30 UTC 64, and results before 2026-11-29 15:25 UTC 256: their
	// names without -batchN mean that batch).
	DefaultBatch = 512
	// CeilingClients is the sysbench client count of the ceiling.
	CeilingClients = 16
)

// Defaults is paraply with its defaults: --workers auto, writeset
// dependencies, batches of 512, commit order kept.
var Defaults = Apply{Kind: Paraply, Mode: "writeset", Batch: DefaultBatch}

// NativeModes are the slave_parallel_mode values measured by default.
var NativeModes = []string{"conservative", "optimistic", "aggressive"}

var (
	nativeModes  = []string{"conservative", "optimistic", "aggressive", "minimal", "none"}
	paraplyModes = []string{"serial", "database", "commit-order", "writeset", "writeset-session"}
)

// Apply is one way of applying a backlog. Its Name is also its flag
// syntax:
//
//	native-single                     slave_parallel_threads=0
//	native-16-optimistic              slave_parallel_threads=16, slave_parallel_mode=optimistic
//	native-16-optimistic-receive      the same, timed from START SLAVE with an empty relay log
//	paraply-16-writeset               --workers 16 --dependency writeset (--batch-max-txns 512)
//	paraply-auto-writeset             --workers auto: paraply's defaults
//	paraply-16-writeset-nobatch       the same with --batch-max-txns 1
//	paraply-16-writeset-batch64       --batch-max-txns 64 (as the default was until 2026-11-26)
//	paraply-16-writeset-unordered     --preserve-commit-order=false
//	paraply-16-writeset-gtids         --preserve-gtids (one source transaction per target transaction)
//	ceiling                           sysbench with 16 clients on the target
//	ceiling-32                        ... with 32 clients
//	mariadb-binlog                    mariadb-binlog FILES | mariadb (point-in-time recovery)
//	apply-16                          paraply apply --workers 16 FILES
//	apply-auto                        paraply apply FILES: its defaults (--workers auto)
//	paraply-auto-writeset@b           a paraply or apply configuration run with the second
//	                                  binary (Config.ParaplyB), to compare two builds
type Apply struct {
	Kind Kind `json:"kind"`
	// Threads is slave_parallel_threads (native, 0 = the single-threaded
	// SQL thread), --workers (paraply, 0 = auto; apply) or sysbench
	// clients (ceiling).
	Threads int `json:"threads"`
	// Mode is slave_parallel_mode (native) or --dependency (paraply).
	Mode string `json:"mode,omitempty"`
	// Batch is --batch-max-txns (paraply).
	Batch int `json:"batch,omitempty"`
	// Unordered is --preserve-commit-order=false (paraply).
	Unordered bool `json:"unordered,omitempty"`
	// Binlog is --apply binlog (paraply): every row through the target's
	// own row applier, instead of paraply's default (auto: SQL, and the
	// row applier only for tables SQL cannot apply exactly).
	Binlog bool `json:"binlog,omitempty"`
	// GTIDs is --preserve-gtids (paraply): each source transaction commits
	// under its own GTID, so Batch is 1.
	GTIDs bool `json:"gtids,omitempty"`
	// Receive times the native replica from START SLAVE with an empty
	// relay log, receiving included, as paraply's time always is.
	Receive bool `json:"receive,omitempty"`
	// B runs the configuration with the second paraply binary
	// (Config.ParaplyB): paraply and apply configurations only.
	B bool `json:"b,omitempty"`
}

// bSuffix marks, in a configuration's name, a run of the second binary.
const bSuffix = "@b"

// Name returns the configuration's name in the syntax ParseApply reads.
func (a Apply) Name() string {
	if a.B {
		a.B = false
		return a.Name() + bSuffix
	}
	switch a.Kind {
	case Native:
		s := fmt.Sprintf("native-%d-%s", a.Threads, a.Mode)
		if a.Threads == 0 {
			s = "native-single"
		}
		if a.Receive {
			s += "-receive"
		}
		return s
	case Paraply:
		s := fmt.Sprintf("paraply-%s-%s", a.workers(), a.Mode)
		switch {
		case a.Batch == DefaultBatch, a.GTIDs:
		case a.Batch == 1:
			s += "-nobatch"
		default:
			s += fmt.Sprintf("-batch%d", a.Batch)
		}
		if a.Unordered {
			s += "-unordered"
		}
		if a.Binlog {
			s += "-binlog"
		}
		if a.GTIDs {
			s += "-gtids"
		}
		return s
	case Ceiling:
		if a.Threads == CeilingClients {
			return "ceiling"
		}
		return fmt.Sprintf("ceiling-%d", a.Threads)
	case ParaplyApply:
		return "apply-" + a.workers()
	}
	return string(a.Kind)
}

// Label is the configuration in words, for progress lines and tables.
func (a Apply) Label() string {
	if a.B {
		a.B = false
		return a.Label() + " (binary B)"
	}
	switch a.Kind {
	case Native:
		s := fmt.Sprintf("native %d %s", a.Threads, a.Mode)
		if a.Threads == 0 {
			s = "native single"
		}
		if a.Receive {
			s += " from START SLAVE"
		}
		return s
	case Paraply:
		s := fmt.Sprintf("paraply %s %s", a.workers(), a.Mode)
		if a.Batch == 1 {
			s += " nobatch"
		} else {
			s += fmt.Sprintf(" batch=%d", a.Batch)
		}
		if a.Unordered {
			s += " unordered"
		}
		if a.Binlog {
			s += " apply=binlog"
		}
		if a.GTIDs {
			s += " preserve-gtids"
		}
		return s
	case Ceiling:
		return fmt.Sprintf("ceiling (sysbench %d clients on the target)", a.Threads)
	case MariadbBinlog:
		return "mariadb-binlog | mariadb"
	case ParaplyApply:
		return "paraply apply " + a.workers()
	}
	return string(a.Kind)
}

// workers is --workers of a paraply configuration.
func (a Apply) workers() string {
	if a.Threads == 0 {
		return "auto"
	}
	return strconv.Itoa(a.Threads)
}

// ParseApply parses a configuration name (see Apply).
func ParseApply(name string) (Apply, error) {
	bad := func(why string) (Apply, error) {
		return Apply{}, fmt.Errorf("configuration %q: %s", name, why)
	}
	if Kind(name) == MariadbBinlog {
		return Apply{Kind: MariadbBinlog}, nil
	}
	if n, ok := strings.CutSuffix(name, bSuffix); ok {
		a, err := ParseApply(n)
		if err == nil && a.Kind != Paraply && a.Kind != ParaplyApply {
			return bad("only paraply and apply configurations run the second binary")
		}
		a.B = true
		return a, err
	}
	kind, rest, _ := strings.Cut(name, "-")
	switch Kind(kind) {
	case ParaplyApply:
		if rest == "auto" {
			return Apply{Kind: ParaplyApply}, nil
		}
		n, err := strconv.Atoi(rest)
		if err != nil || n < 1 {
			return bad("want apply-<workers> or apply-auto")
		}
		return Apply{Kind: ParaplyApply, Threads: n}, nil
	case Ceiling:
		a := Apply{Kind: Ceiling, Threads: CeilingClients}
		if rest != "" {
			n, err := strconv.Atoi(rest)
			if err != nil || n < 1 {
				return bad("want ceiling or ceiling-<clients>")
			}
			a.Threads = n
		}
		return a, nil
	case Native:
		rest, receive := strings.CutSuffix(rest, "-receive")
		if rest == "single" {
			return Apply{Kind: Native, Receive: receive}, nil
		}
		n, mode, ok := threadsMode(rest)
		if !ok || n < 1 || !slices.Contains(nativeModes, mode) {
			return bad("want native-single or native-<threads>-<" + strings.Join(nativeModes, "|") + ">, then -receive or not")
		}
		return Apply{Kind: Native, Threads: n, Mode: mode, Receive: receive}, nil
	case Paraply:
		a := Apply{Kind: Paraply, Batch: DefaultBatch}
		if r, ok := strings.CutSuffix(rest, "-gtids"); ok {
			rest, a.GTIDs, a.Batch = r, true, 1
		}
		if r, ok := strings.CutSuffix(rest, "-binlog"); ok {
			rest, a.Binlog = r, true
		}
		if r, ok := strings.CutSuffix(rest, "-unordered"); ok {
			rest, a.Unordered = r, true
		}
		if r, ok := strings.CutSuffix(rest, "-nobatch"); ok {
			rest, a.Batch = r, 1
		} else if i := strings.LastIndex(rest, "-batch"); i >= 0 {
			b, err := strconv.Atoi(rest[i+len("-batch"):])
			if err != nil || b < 1 {
				return bad("bad -batch<N> suffix")
			}
			rest, a.Batch = rest[:i], b
		}
		r, auto := strings.CutPrefix(rest, "auto-")
		if auto {
			rest = "0-" + r
		}
		n, mode, ok := threadsMode(rest)
		if !ok || n < 1 && !auto || !slices.Contains(paraplyModes, mode) {
			return bad("want paraply-<workers|auto>-<" + strings.Join(paraplyModes, "|") + ">[-nobatch|-batch<N>][-unordered][-binlog][-gtids]")
		}
		a.Threads, a.Mode = n, mode
		return a, nil
	}
	return bad("want native-..., paraply-..., ceiling, mariadb-binlog or apply-...")
}

// threadsMode splits "16-optimistic" into 16 and "optimistic".
func threadsMode(s string) (int, string, bool) {
	num, mode, ok := strings.Cut(s, "-")
	if !ok {
		return 0, "", false
	}
	n, err := strconv.Atoi(num)
	return n, mode, err == nil
}

// base returns the paraply configuration whose throughput is the base of
// a's measured speedup: one worker, serial, with a's batching, ordering
// and apply path. The analyzer's predicted speedups are over one worker
// too.
func (a Apply) base() Apply {
	return Apply{Kind: Paraply, Threads: 1, Mode: "serial", Batch: a.Batch, Unordered: a.Unordered, Binlog: a.Binlog, GTIDs: a.GTIDs, B: a.B}
}
