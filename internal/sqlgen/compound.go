package sqlgen

import (
	"errors"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// compoundMaxBytes caps a compound packet below Packet's limit: the server
// keeps every statement of a compound statement parsed until its END,
// where a multi-statement packet frees each one after it runs.
const compoundMaxBytes = 1 << 20

// signalPrefix starts the message of the SIGNAL a compound packet raises
// when a statement's affected-row count differs; the statement's index in
// the batch and the count follow, as "paraply row count:17:0".
const signalPrefix = "paraply row count:"

// checkBytes is the most text Compound adds after a checked statement:
// the check with a count and an index of up to 20 digits each.
const checkBytes = len("IF ROW_COUNT()<> THEN SET @paraply_rows=CONCAT('"+signalPrefix+":',ROW_COUNT());"+
	"SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT=@paraply_rows;END IF;") + 40

// Compound is Packet for a MariaDB target: the statements from the i-th on
// that fit in maxBytes (0: DefaultMaxPacket, capped at 1 MiB), at least
// one, as one compound statement (BEGIN NOT ATOMIC ... END), each
// statement whose Expect has a row count followed by a check of it.
//
// A multi-statement packet is answered with one OK packet per statement,
// each sent as its statement ends, and the client wakes for each; a
// compound statement is answered once, which costs both paraply and the
// target less CPU (docs/benchmark.md, "The measurements behind the
// defaults"). The checks
// stop the compound statement at the first statement whose count differs
// from its Expect, with an error CompoundError turns into the
// *RowCountError that Check would have returned; the transaction stays
// open, as after any failed statement.
//
// The checks use ROW_COUNT(), which reports what the OK packet would have
// (matched rows for UPDATE with clientFoundRows=true), and a user variable
// for the message: a local variable (DECLARE) would shadow a column of the
// same name in the statements, backticks or not.
func (b *Batch) Compound(i, maxBytes int) (query string, args []any, next int) {
	b.flush()
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPacket
	}
	next = b.span(i, min(maxBytes, compoundMaxBytes), checkBytes)
	q := append(b.compound[:0], "BEGIN NOT ATOMIC "...)
	for k := i; k < next; k++ {
		q = append(q, b.text(k)...)
		q = append(q, ';')
		rows := b.expects[k].Rows
		if rows < 0 {
			continue
		}
		q = append(q, "IF ROW_COUNT()<>"...)
		q = strconv.AppendInt(q, rows, 10)
		q = append(q, " THEN SET @paraply_rows=CONCAT('"+signalPrefix...)
		q = strconv.AppendInt(q, int64(k), 10)
		q = append(q, ":',ROW_COUNT());SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT=@paraply_rows;END IF;"...)
	}
	q = append(q, "END"...)
	b.compound = q
	return string(q), b.args[b.starts[i].args:b.end(next-1).args], next
}

// erSignalException is the error number of a SIGNAL with a user SQLSTATE.
const erSignalException = 1644

// CompoundError returns the *RowCountError that err, an error of a packet
// from Compound, reports, or err itself if it is not one.
func (b *Batch) CompoundError(err error) error {
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != erSignalException {
		return err
	}
	rest, ok := strings.CutPrefix(me.Message, signalPrefix)
	if !ok {
		return err
	}
	index, count, ok := strings.Cut(rest, ":")
	k, kerr := strconv.Atoi(index)
	n, nerr := strconv.ParseInt(count, 10, 64)
	if !ok || kerr != nil || nerr != nil || k < 0 || k >= len(b.expects) {
		return err
	}
	return &RowCountError{Statement: k, Expect: b.expects[k], Affected: n}
}

// text is the i-th statement, without its separator.
func (b *Batch) text(i int) []byte {
	end := len(b.buf)
	if i+1 < len(b.expects) {
		end = b.starts[i+1].buf - 1
	}
	return b.buf[b.starts[i].buf:end]
}

// span returns the end of the run of statements from the i-th on whose
// text, estimated arguments and perCheck bytes for each checked statement
// fit in maxBytes; at least one.
func (b *Batch) span(i, maxBytes, perCheck int) int {
	start := b.starts[i]
	checks := 0
	j := i + 1
	if b.expects[i].Rows >= 0 {
		checks++
	}
	for ; j < len(b.expects); j++ {
		if b.expects[j].Rows >= 0 {
			checks++
		}
		end := b.end(j)
		if end.buf-start.buf+end.argBytes-start.argBytes+checks*perCheck > maxBytes {
			break
		}
	}
	return j
}
