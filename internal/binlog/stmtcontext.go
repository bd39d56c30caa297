package binlog

import (
	"encoding/binary"
	"fmt"

	"github.com/go-mysql-org/go-mysql/replication"
)

// StatementContext is what a statement logged in statement format read
// from its session that its text does not carry: the context events the
// server logs right before its query event (Intvar, Rand, User_var), which
// a replica puts in force before it runs the statement (MariaDB's
// Intvar_log_event, Rand_log_event and User_var_log_event::do_apply_event),
// so that AUTO_INCREMENT, LAST_INSERT_ID(), RAND() and @variables give the
// source's values.
type StatementContext struct {
	// InsertID is the first AUTO_INCREMENT value the statement generated
	// (SET insert_id), when HasInsertID.
	InsertID    uint64
	HasInsertID bool
	// LastInsertID is what LAST_INSERT_ID() returned to the statement,
	// when HasLastInsertID.
	LastInsertID    uint64
	HasLastInsertID bool
	// RandSeed1 and RandSeed2 seed RAND() (SET rand_seed1, rand_seed2),
	// when HasRand.
	RandSeed1, RandSeed2 uint64
	HasRand              bool
	// UserVars are the user variables the statement read.
	UserVars []UserVar
}

// Empty reports whether the statement read nothing of its session
// beyond its query event's status variables.
func (c *StatementContext) Empty() bool {
	return !c.HasInsertID && !c.HasLastInsertID && !c.HasRand && len(c.UserVars) == 0
}

// UserVar is a user variable as a User_var event carries it.
type UserVar struct {
	Name string
	// Null is set for a NULL value; Type and Value are then unset.
	Null bool
	// Type is the value's type: UserVarString, UserVarReal, UserVarInt or
	// UserVarDecimal.
	Type byte
	// Collation is a string's collation ID.
	Collation uint32
	// Value is the value's bytes: a string's bytes in its character set,
	// a little-endian float64 or int64, or a DECIMAL in the binary form of
	// the server (precision and scale in its first two bytes).
	Value []byte
	// Unsigned is set for an integer that is unsigned.
	Unsigned bool
}

// User variable types (the server's Item_result).
const (
	UserVarString  = 0
	UserVarReal    = 1
	UserVarInt     = 2
	UserVarDecimal = 4
)

// Intvar event types.
const (
	intvarLastInsertID = 1
	intvarInsertID     = 2
)

// LoadData is the file of a LOAD DATA logged in statement format
// (Begin_load_query and Append_block events), which the statement reads
// in place of the source's file, and where in its text the file clause is.
type LoadData struct {
	// File is the file's content.
	File []byte
	// FnStart and FnEnd delimit the part of the statement the server
	// replaces with its own file clause: " INFILE 'name' [IGNORE|REPLACE]
	// INTO " (MariaDB's Execute_load_query_log_event::do_apply_event).
	FnStart, FnEnd int
	// Dup is the duplicate handling: LoadDupError, LoadDupIgnore or
	// LoadDupReplace.
	Dup uint8
}

// Duplicate handling of a LOAD DATA (LoadData.Dup).
const (
	LoadDupError   = 0
	LoadDupIgnore  = 1
	LoadDupReplace = 2
)

// addIntvar notes an Intvar event for the next statement.
func (d *Decoder) addIntvar(e *replication.IntVarEvent) {
	switch e.Type {
	case intvarInsertID:
		d.pending.InsertID, d.pending.HasInsertID = e.Value, true
	case intvarLastInsertID:
		d.pending.LastInsertID, d.pending.HasLastInsertID = e.Value, true
	}
}

// addRand notes a Rand event's seeds (two little-endian 64-bit numbers).
func (d *Decoder) addRand(body []byte) error {
	if len(body) < 16 {
		return fmt.Errorf("%w: rand event of %d bytes", ErrCorrupt, len(body))
	}
	d.pending.RandSeed1 = binary.LittleEndian.Uint64(body)
	d.pending.RandSeed2 = binary.LittleEndian.Uint64(body[8:])
	d.pending.HasRand = true
	return nil
}

// addUserVar notes a User_var event: name length (4), name, null flag (1),
// then, unless NULL, type (1), collation (4), value length (4), value and,
// from MySQL 5.6 / MariaDB 10.0, a flags byte (1: UNSIGNED).
func (d *Decoder) addUserVar(body []byte) error {
	bad := func() error { return fmt.Errorf("%w: user variable event of %d bytes", ErrCorrupt, len(body)) }
	if len(body) < 5 {
		return bad()
	}
	n := int(binary.LittleEndian.Uint32(body))
	if n > len(body)-5 {
		return bad()
	}
	v := UserVar{Name: string(body[4 : 4+n])}
	p := 4 + n
	if v.Null = body[p] != 0; !v.Null {
		p++
		if len(body) < p+9 {
			return bad()
		}
		v.Type = body[p]
		v.Collation = binary.LittleEndian.Uint32(body[p+1:])
		size := int(binary.LittleEndian.Uint32(body[p+5:]))
		p += 9
		if size > len(body)-p {
			return bad()
		}
		v.Value = append([]byte(nil), body[p:p+size]...)
		p += size
		v.Unsigned = p < len(body) && body[p]&1 != 0
	}
	d.pending.UserVars = append(d.pending.UserVars, v)
	return nil
}

// addLoadBlock notes a block of a LOAD DATA file: the first
// (Begin_load_query) or a further one (Append_block), each a file id (4)
// then the bytes.
func (d *Decoder) addLoadBlock(body []byte, first bool) error {
	if len(body) < 4 {
		return fmt.Errorf("%w: load block event of %d bytes", ErrCorrupt, len(body))
	}
	id := binary.LittleEndian.Uint32(body)
	if d.loads == nil {
		d.loads = map[uint32][]byte{}
	}
	if first {
		d.loads[id] = nil
	}
	d.loads[id] = append(d.loads[id], body[4:]...)
	return nil
}

// executeLoad decodes an Execute_load_query event, a query event with a
// longer post-header: thread id (4), execution time (4), database name
// length (1), error code (2), status variables length (2), file id (4),
// file clause start and end in the query (4 + 4), duplicate handling
// (1); then the status variables, the database name and a NUL, and the
// query.
func (d *Decoder) executeLoad(t *Txn, h *replication.EventHeader, body []byte) error {
	const post = 13 + 13
	if len(body) < post {
		return fmt.Errorf("%w: execute load query event of %d bytes", ErrCorrupt, len(body))
	}
	le := binary.LittleEndian
	dbLen, statusLen := int(body[8]), int(le.Uint16(body[11:]))
	id := le.Uint32(body[13:])
	ld := &LoadData{FnStart: int(le.Uint32(body[17:])), FnEnd: int(le.Uint32(body[21:])), Dup: body[25]}
	if len(body) < post+statusLen+dbLen+1 {
		return fmt.Errorf("%w: execute load query event of %d bytes", ErrCorrupt, len(body))
	}
	status := body[post : post+statusLen]
	db := string(body[post+statusLen : post+statusLen+dbLen])
	q := string(body[post+statusLen+dbLen+1:])
	if ld.FnStart > ld.FnEnd || ld.FnEnd > len(q) {
		return fmt.Errorf("%w: execute load query event: file clause %d..%d outside a query of %d bytes", ErrCorrupt, ld.FnStart, ld.FnEnd, len(q))
	}
	file, ok := d.loads[id]
	if !ok {
		return fmt.Errorf("%w: LOAD DATA of file %d whose content the binlog does not hold before it", ErrCorrupt, id)
	}
	delete(d.loads, id)
	ld.File = file
	if t.ThreadID == 0 {
		t.ThreadID = le.Uint32(body)
	}
	t.Statements = append(t.Statements, Statement{Schema: db, Query: q, Kind: StmtDML, At: len(t.Rows),
		Session: parseQuerySession(status), When: h.Timestamp, ThreadID: le.Uint32(body),
		ErrorCode: le.Uint16(body[9:]), Context: d.takeContext(), Load: ld})
	t.StatementDML, t.LoadData = true, true
	return nil
}

// takeContext returns the context events noted since the last statement,
// and forgets them: each belongs to the statement after it.
func (d *Decoder) takeContext() StatementContext {
	c := d.pending
	d.pending = StatementContext{}
	return c
}

// eventBody is an event's bytes after its header, without the checksum.
func (d *Decoder) eventBody(be *replication.BinlogEvent) []byte {
	b := be.RawData
	if len(b) < HeaderSize {
		return nil
	}
	b = b[HeaderSize:]
	if n := d.checksumLen(); n > 0 && len(b) >= n {
		b = b[:len(b)-n]
	}
	return b
}
