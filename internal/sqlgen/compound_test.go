package sqlgen

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/paraply/paraply/internal/binlog"
)

// compoundCheck is the check Compound writes after a checked statement:
// its expected count and its index.
var compoundCheck = regexp.MustCompile(`IF ROW_COUNT\(\)<>(\d+) THEN SET @paraply_rows=CONCAT\('paraply row count:(\d+):',ROW_COUNT\(\)\);` +
	`SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT=@paraply_rows;END IF;`)

// TestCompound: the compound packets of a batch hold its statements in
// order, each once, each checked statement followed by the check of its
// own count and index, and exactly the batch's arguments; a packet stays
// within the limit unless it holds one statement.
func TestCompound(t *testing.T) {
	for _, compact := range []bool{false, true} {
		b := rowsBatch(t, compact)
		b.Raw("INSERT INTO `paraply`.`applied` (`gtid`) VALUES (?)", "0-1-5")
		expects := b.Expects()
		for _, limit := range []int{1, 900, 1 << 20} {
			var args []any
			var stmts []string
			packets, checks := 0, 0
			for i := 0; i < b.Len(); packets++ {
				q, a, next := b.Compound(i, limit)
				checkPacket(t, limit, i, next, q, a)
				body, begins := strings.CutPrefix(q, "BEGIN NOT ATOMIC ")
				body, ends := strings.CutSuffix(body, "END")
				if !begins || !ends {
					t.Fatalf("limit %d: packet %q is not a compound statement", limit, q)
				}
				// Cut the body at the checks: what precedes each is the
				// statements up to the one it checks.
				k, prev := i, 0
				for _, m := range compoundCheck.FindAllStringSubmatchIndex(body, -1) {
					for _, s := range strings.Split(strings.TrimSuffix(body[prev:m[0]], ";"), ";") {
						stmts = append(stmts, s)
						k++
					}
					var rows, index int
					fmt.Sscan(body[m[2]:m[3]], &rows)
					fmt.Sscan(body[m[4]:m[5]], &index)
					if index != k-1 || int64(rows) != expects[k-1].Rows {
						t.Errorf("limit %d: check of statement %d says index %d, %d rows; Expect %+v", limit, k-1, index, rows, expects[k-1])
					}
					checks++
					prev = m[1]
				}
				if rest := body[prev:]; rest != "" {
					stmts = append(stmts, strings.Split(strings.TrimSuffix(rest, ";"), ";")...)
				}
				args = append(args, a...)
				i = next
			}
			checkCover(t, b, limit, stmts, args, packets)
			want := 0
			for _, e := range expects {
				if e.Rows >= 0 {
					want++
				}
			}
			if checks != want {
				t.Errorf("limit %d: %d checks for %d statements with a count", limit, checks, want)
			}
			t.Logf("compact %v: %d checks", compact, checks)
		}
	}
}

// TestCompoundError: the SIGNAL of a check becomes the RowCountError of
// its statement; other errors, and messages that do not parse or name a
// statement the batch lacks, pass through.
func TestCompoundError(t *testing.T) {
	tt := newTable(t, "db", "t", tCols, primary(0))
	var b Batch
	b.Raw("START TRANSACTION")
	if err := b.Add(tt, rows(tt, binlog.Delete, []any{int32(1), "a", int32(0), nil}, []any{int32(2), "b", int32(0), nil}), 0); err != nil {
		t.Fatal(err)
	}
	signal := func(msg string) error {
		return fmt.Errorf("wrapped: %w", &mysql.MySQLError{Number: 1644, SQLState: [5]byte{'4', '5', '0', '0', '0'}, Message: msg})
	}
	var rc *RowCountError
	if err := b.CompoundError(signal("paraply row count:1:1")); !errors.As(err, &rc) {
		t.Fatalf("got %v, want a RowCountError", err)
	}
	if rc.Statement != 1 || rc.Affected != 1 || rc.Expect != b.Expects()[1] {
		t.Errorf("got %+v, want statement 1, 1 row affected, Expect %+v", rc, b.Expects()[1])
	}
	t.Log(rc)
	for _, err := range []error{
		signal("paraply row count:2:0"),  // no such statement
		signal("paraply row count:-1:0"), // no such statement
		signal("paraply row count:1"),
		signal("paraply row count:1:x"),
		signal("something else:1:0"),
		&mysql.MySQLError{Number: 1062, Message: "paraply row count:1:0"},
		errors.New("paraply row count:1:0"),
	} {
		if got := b.CompoundError(err); got != err { //nolint:errorlint // the very same error, not one wrapping it
			t.Errorf("%v: got %v, want it unchanged", err, got)
		}
	}
}
