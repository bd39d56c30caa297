package sqlgen

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// DefaultMaxGroupRows is the number of rows beyond which a compacting
// Batch starts a new grouped statement.
const DefaultMaxGroupRows = 200

// caseBudget bounds rows × SET columns of a grouped UPDATE. The server
// scans a CASE's WHEN list for every row and column, so a statement costs
// rows² × columns comparisons: on MariaDB 10.11, an UPDATE of 200 rows ×
// 30 columns cost as much server CPU as 200 single-row UPDATEs, while one
// of 200 rows × 1 column cost less than half of them.
const caseBudget = 400

// netKind is what the changes of one row within a segment amount to.
type netKind uint8

const (
	netInsert    netKind = iota + 1 // absent before, present after: INSERT after
	netUpdate                       // present before and after: UPDATE to after what differs from before
	netReplace                      // deleted, then inserted: UPDATE every column to after
	netDelete                       // present before, absent after: DELETE before
	netTransient                    // inserted, then deleted: INSERT after, then DELETE it
)

// change is the net change of one row: a chain of row changes on one key,
// or (in segment.pass) one change written as it is.
type change struct {
	t    *Table
	kind netKind
	// before is the first before image (netUpdate, netReplace,
	// netDelete), after the last after image (all but netDelete); both
	// hold converted values (see value), nil for generated columns.
	before, after []any
	txn, lastTxn  int // the caller's transactions of the first and last change
	// phase orders the output (see segment).
	phase int
}

// keyImage returns the image whose key locates the row before the change.
func (c *change) keyImage() []any {
	if c.before != nil {
		return c.before
	}
	return c.after
}

// keyState is what a segment knows of one key of a table.
type keyState struct {
	open  *change // the chain being extended, nil if none
	level int     // level of the last change of the key passed through, -1 if none
}

// segTable holds a segment's chains on one table.
type segTable struct {
	t      *Table
	keys   map[string]int // encoded primary key → index in states
	states []keyState
	chains []*change // in order of their first change
}

// segment holds the row changes of compactable tables that a compacting
// Batch collected and has not written yet: Add collects them, flush (at a
// Raw statement, a change on the same table that cannot be collected, or
// when the statements are read) writes them.
//
// The changes of each row (by primary key) form a chain that becomes one
// net change. Chains of different rows commute, so they are written
// grouped by table and kind, whatever their order. A change that cannot
// join its row's chain (an update of the primary key, which touches two
// rows, or a change the chain says is impossible) is passed through: it is
// written on its own, after the chains of its rows so far, and the next
// changes of those rows start new chains, written after it. Phases order
// this: the output is the chains of phase 0, then the changes passed
// through at level 0 in source order, then the chains of phase 1, and so
// on. A new chain of a key gets the phase after the level of the last
// change of the key passed through (0 if none), and a change passed
// through gets the highest phase or level among its keys' open chains and
// earlier passed-through changes.
type segment struct {
	tables []*segTable // in order of first appearance
	byName map[schema.TableName]*segTable
	pass   []*change // changes passed through, in source order
	phases int       // 1 + the highest phase or level
	rows   int       // row changes held

	vals   []any    // converted row images
	slab   []change // changes are allocated from slab[used:]
	used   int
	spare  []*segTable // emptied segTables to reuse
	keyBuf [2][]byte

	// scratch space of write
	dels, ins, trans []*change
	groups           []updateGroup
	groupOf          map[string]int
	sig              []byte
}

// updateGroup is the net updates of one phase and table that set the
// same columns.
type updateGroup struct {
	cols []int
	rows []*change
}

func (s *segment) empty() bool { return s.rows == 0 }

// reset forgets every change, keeping memory.
func (s *segment) reset() {
	for _, st := range s.tables {
		clear(st.keys)
		clear(st.states)
		clear(st.chains)
		st.t, st.states, st.chains = nil, st.states[:0], st.chains[:0]
		s.spare = append(s.spare, st)
	}
	clear(s.tables)
	clear(s.byName)
	clear(s.pass)
	clear(s.vals)
	clear(s.slab[:s.used])
	s.tables, s.pass, s.vals, s.used = s.tables[:0], s.pass[:0], s.vals[:0], 0
	s.phases, s.rows = 0, 0
}

// holds reports whether the segment has changes of the table named n.
func (s *segment) holds(n schema.TableName) bool { return s.byName[n] != nil }

// table returns the segTable of t, adding it if needed. The caller has
// made sure that the segment holds no changes of another Table of the
// same name.
func (s *segment) table(t *Table) *segTable {
	if st := s.byName[t.Name]; st != nil {
		return st
	}
	if s.byName == nil {
		s.byName = map[schema.TableName]*segTable{}
	}
	var st *segTable
	if n := len(s.spare); n > 0 {
		st, s.spare = s.spare[n-1], s.spare[:n-1]
	} else {
		st = &segTable{keys: map[string]int{}}
	}
	st.t = t
	s.byName[t.Name] = st
	s.tables = append(s.tables, st)
	return st
}

func (s *segment) newChange(t *Table, kind netKind, before, after []any, txn, phase int) *change {
	if s.used == len(s.slab) {
		// The changes handed out so far stay in the old slab.
		s.slab, s.used = make([]change, max(64, 2*len(s.slab))), 0
	}
	c := &s.slab[s.used]
	s.used++
	*c = change{t: t, kind: kind, before: before, after: after, txn: txn, lastTxn: txn, phase: phase}
	s.phases = max(s.phases, phase+1)
	return c
}

// addCompact adds the changes of r to the segment if r qualifies: a
// compactable table, whole row images, no partial JSON. It reports whether
// it took r; on error the segment is as it was.
func (b *Batch) addCompact(t *Table, r *binlog.Rows, txn int) (bool, error) {
	if !t.compact || r.Before != nil || r.After != nil || r.PartialJSON {
		return false, nil
	}
	switch r.Op {
	case binlog.Insert, binlog.Delete:
	case binlog.Update:
		if len(r.Images)%2 != 0 {
			return false, nil // Add reports it
		}
	default:
		return false, nil
	}
	n := len(t.Columns)
	for _, img := range r.Images {
		if len(img) != n {
			return false, nil
		}
	}
	s := &b.seg
	if st := s.byName[t.Name]; st != nil && st.t != t {
		// Another view of the table (another table map): its changes
		// are not comparable with these, write them first.
		b.flush()
	}
	start := len(s.vals)
	for _, img := range r.Images {
		for i := range t.Columns {
			c := &t.Columns[i]
			if c.Generated {
				s.vals = append(s.vals, nil)
				continue
			}
			v, err := value(c, img[i])
			if err != nil {
				clear(s.vals[start:])
				s.vals = s.vals[:start]
				return true, err
			}
			s.vals = append(s.vals, v)
		}
	}
	st := s.table(t)
	image := func(k int) []any { return s.vals[start+k*n : start+(k+1)*n : start+(k+1)*n] }
	for k := 0; k < len(r.Images); k++ {
		switch r.Op {
		case binlog.Insert:
			s.add(st, binlog.Insert, nil, image(k), txn)
		case binlog.Delete:
			s.add(st, binlog.Delete, image(k), nil, txn)
		case binlog.Update:
			s.add(st, binlog.Update, image(k), image(k+1), txn)
			k++
		}
	}
	return true, nil
}

// add adds one row change to its row's chain, or passes it through.
func (s *segment) add(st *segTable, op binlog.Op, before, after []any, txn int) {
	s.rows++
	img := before
	if img == nil {
		img = after
	}
	s.keyBuf[0] = appendKey(s.keyBuf[0][:0], st.t, img)
	if op == binlog.Update {
		s.keyBuf[1] = appendKey(s.keyBuf[1][:0], st.t, after)
		if !bytes.Equal(s.keyBuf[0], s.keyBuf[1]) {
			// A new primary key: the change touches two rows.
			k0 := st.state(s.keyBuf[0])
			k1 := st.state(s.keyBuf[1])
			s.passThrough(st, op, before, after, txn, k0, k1)
			return
		}
	}
	k := st.state(s.keyBuf[0])
	ks := &st.states[k]
	c := ks.open
	if c == nil {
		var kind netKind
		switch op {
		case binlog.Insert:
			kind = netInsert
		case binlog.Update:
			kind = netUpdate
		default:
			kind = netDelete
		}
		c = s.newChange(st.t, kind, before, after, txn, ks.level+1)
		ks.open = c
		st.chains = append(st.chains, c)
		return
	}
	if !c.extend(op, after) {
		s.passThrough(st, op, before, after, txn, k, -1)
		return
	}
	c.lastTxn = txn
}

// extend applies one more change of the row to the chain. It returns false
// if the chain says the change is impossible (an insert of a row that
// exists, a change of one that does not): the source's binary log
// contradicts itself, and the change is passed through for the target to
// judge, as it would without compaction.
func (c *change) extend(op binlog.Op, after []any) bool {
	switch {
	case op == binlog.Update && c.kind != netDelete && c.kind != netTransient:
		c.after = after // netInsert stays an insert, of the new image
	case op == binlog.Delete && c.kind == netInsert:
		c.kind = netTransient
	case op == binlog.Delete && (c.kind == netUpdate || c.kind == netReplace):
		c.kind, c.after = netDelete, nil // before stays the first image
	case op == binlog.Insert && c.kind == netDelete:
		c.kind, c.after = netReplace, after
	case op == binlog.Insert && c.kind == netTransient:
		// The insert proves that the row did not exist, as the
		// transient insert would have.
		c.kind, c.after = netInsert, after
	default:
		return false
	}
	return true
}

// passThrough adds a change to write on its own: after the chains so far
// of the keys it touches (states k0 and k1, -1 for none), before their
// next chains.
func (s *segment) passThrough(st *segTable, op binlog.Op, before, after []any, txn int, k0, k1 int) {
	level := 0
	for _, k := range []int{k0, k1} {
		if k < 0 {
			continue
		}
		ks := &st.states[k]
		if ks.open != nil {
			level = max(level, ks.open.phase)
		} else {
			level = max(level, ks.level)
		}
	}
	for _, k := range []int{k0, k1} {
		if k >= 0 {
			st.states[k] = keyState{level: level}
		}
	}
	kind := netUpdate
	switch op {
	case binlog.Insert:
		kind = netInsert
	case binlog.Delete:
		kind = netDelete
	}
	s.pass = append(s.pass, s.newChange(st.t, kind, before, after, txn, level))
}

// state returns the index of the state of a key, adding it if needed.
func (st *segTable) state(key []byte) int {
	if k, ok := st.keys[string(key)]; ok {
		return k
	}
	st.states = append(st.states, keyState{level: -1})
	st.keys[string(key)] = len(st.states) - 1
	return len(st.states) - 1
}

// appendKey appends an encoding of the primary key of img, converted
// values, that is equal for two images exactly when their key values are.
func appendKey(b []byte, t *Table, img []any) []byte {
	for _, i := range t.Primary {
		switch v := img[i].(type) {
		case nil:
			b = append(b, 0)
		case int64:
			if v < 0 {
				b = append(b, 1)
			} else {
				b = append(b, 2) // as uint64
			}
			b = binary.BigEndian.AppendUint64(b, uint64(v))
		case uint64:
			b = append(b, 2)
			b = binary.BigEndian.AppendUint64(b, v)
		case string:
			b = append(b, 3)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		case []byte:
			b = append(b, 3)
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		default: // not a key type (see Column.exactKey)
			s := fmt.Sprintf("%T:%v", v, v)
			b = append(b, 4)
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	return b
}

// flush writes the segment's changes, if any.
func (b *Batch) flush() {
	s := &b.seg
	if s.empty() {
		return
	}
	for p := 0; p < s.phases; p++ {
		for _, st := range s.tables {
			b.writePhase(st, p)
		}
		for _, c := range s.pass {
			if c.phase == p {
				b.writeOne(c)
			}
		}
	}
	s.reset()
}

// writePhase writes the chains of one phase on one table: DELETEs, UPDATEs
// grouped by the columns they set, INSERTs, and the DELETEs of rows
// inserted first. Each row has one chain per phase, so the order does not
// matter but for the last two.
func (b *Batch) writePhase(st *segTable, p int) {
	s := &b.seg
	t := st.t
	dels, ins, trans, groups := s.dels[:0], s.ins[:0], s.trans[:0], s.groups[:0]
	if s.groupOf == nil {
		s.groupOf = map[string]int{}
	}
	for _, c := range st.chains {
		if c.phase != p {
			continue
		}
		switch c.kind {
		case netDelete:
			dels = append(dels, c)
		case netInsert:
			ins = append(ins, c)
		case netTransient:
			ins = append(ins, c)
			trans = append(trans, c)
		case netUpdate, netReplace:
			s.sig = setColumns(s.sig[:0], c)
			g, ok := s.groupOf[string(s.sig)]
			if !ok {
				g = len(groups)
				if g < cap(groups) {
					groups = groups[:g+1]
					groups[g].rows = groups[g].rows[:0]
				} else {
					groups = append(groups, updateGroup{})
				}
				groups[g].cols = bitmapColumns(groups[g].cols[:0], s.sig)
				s.groupOf[string(s.sig)] = g
			}
			groups[g].rows = append(groups[g].rows, c)
		}
	}
	b.groupDelete(t, dels)
	for i := range groups {
		b.groupUpdate(t, groups[i].cols, groups[i].rows)
	}
	b.groupInsert(t, ins)
	b.groupDelete(t, trans)
	clear(dels)
	clear(ins)
	clear(trans)
	for i := range groups {
		clear(groups[i].rows)
	}
	clear(s.groupOf)
	s.dels, s.ins, s.trans, s.groups = dels, ins, trans, groups
}

// setColumns appends the bitmap of the columns that the UPDATE of a
// chain sets: for netUpdate those whose value changed and the stamped
// ones (see Column.stamped), for netReplace every column; never a
// generated or key column (the key is the same).
func setColumns(bm []byte, c *change) []byte {
	t := c.t
	for range (len(t.Columns) + 7) / 8 {
		bm = append(bm, 0)
	}
	for i := range t.Columns {
		if t.Columns[i].Generated || t.isKey(i) {
			continue
		}
		if c.kind == netReplace || t.Columns[i].stamped || !equal(c.before[i], c.after[i]) {
			bm[i>>3] |= 1 << (i & 7)
		}
	}
	return bm
}

// bitmapColumns appends the columns set in bm.
func bitmapColumns(cols []int, bm []byte) []int {
	for i := range len(bm) * 8 {
		if bm[i>>3]&(1<<(i&7)) != 0 {
			cols = append(cols, i)
		}
	}
	return cols
}

func (t *Table) isKey(i int) bool {
	for _, k := range t.Primary {
		if k == i {
			return true
		}
	}
	return false
}

// writeOne writes a change passed through, as Add without compaction
// would.
func (b *Batch) writeOne(c *change) {
	switch c.kind {
	case netInsert:
		b.groupInsert(c.t, []*change{c})
	case netDelete:
		b.groupDelete(c.t, []*change{c})
	default:
		var cols []int
		for i := range c.t.Columns {
			if col := &c.t.Columns[i]; !col.Generated && (col.stamped || !equal(c.before[i], c.after[i])) {
				cols = append(cols, i)
			}
		}
		b.groupUpdate(c.t, cols, []*change{c})
	}
}

func (b *Batch) maxGroupRows() int {
	if b.MaxGroupRows > 0 {
		return b.MaxGroupRows
	}
	return DefaultMaxGroupRows
}

// beginGroup starts a statement for the rows cs of table t.
func (b *Batch) beginGroup(op binlog.Op, t *Table, cs []*change) {
	e := Expect{Rows: int64(len(cs)), Op: op, Table: t.Name, Key: t.keyString(t.Primary, nil, cs[0].keyImage()),
		Txn: cs[0].txn, LastTxn: cs[0].lastTxn}
	for _, c := range cs[1:] {
		e.Txn, e.LastTxn = min(e.Txn, c.txn), max(e.LastTxn, c.lastTxn)
	}
	b.begin(e)
}

// groupDelete writes DELETEs of the rows of cs, located by the key of
// their keyImage (the inserted image for netTransient):
//
//	DELETE FROM `db`.`t` WHERE `id`=?
//	DELETE FROM `db`.`t` WHERE `id` IN (?,?)
//	DELETE FROM `db`.`t` WHERE (`a`=? AND `b`=?) OR (`a`=? AND `b`=?)
func (b *Batch) groupDelete(t *Table, cs []*change) {
	limit, maxRows := b.limit(), b.maxGroupRows()
	single := len(t.Primary) == 1
	for len(cs) > 0 {
		n := b.fitRows(cs, maxRows, limit, func(c *change) int { return keyBytes(t, c.keyImage()) + len(t.pk.eq) + 8 })
		rows := cs[:n]
		cs = cs[n:]
		b.beginGroup(binlog.Delete, t, rows)
		b.buf = append(b.buf, "DELETE FROM "...)
		b.buf = append(b.buf, t.quoted...)
		b.buf = append(b.buf, " WHERE "...)
		b.whereKeys(t, rows, single)
	}
}

// whereKeys appends the condition that selects the rows of cs by key.
func (b *Batch) whereKeys(t *Table, cs []*change, single bool) {
	switch {
	case len(cs) == 1:
		b.keyEq(t, cs[0].keyImage())
	case single:
		c := &t.Columns[t.Primary[0]]
		b.buf = append(b.buf, c.quoted...)
		b.buf = append(b.buf, " IN ("...)
		for j, ch := range cs {
			if j > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = append(b.buf, c.wherePh...)
			b.push(ch.keyImage()[t.Primary[0]])
		}
		b.buf = append(b.buf, ')')
	default:
		for j, ch := range cs {
			if j > 0 {
				b.buf = append(b.buf, " OR "...)
			}
			b.buf = append(b.buf, '(')
			b.keyEq(t, ch.keyImage())
			b.buf = append(b.buf, ')')
		}
	}
}

// keyEq appends `a`=? AND `b`=? for the key of img.
func (b *Batch) keyEq(t *Table, img []any) {
	b.buf = append(b.buf, t.pk.eq...)
	for _, i := range t.Primary {
		b.push(img[i])
	}
}

// keyBytes estimates the size of the key values of img.
func keyBytes(t *Table, img []any) int {
	n := 0
	for _, i := range t.Primary {
		n += argSize(img[i])
	}
	return n
}

// fitRows returns how many of the rows cs go into the next statement: at
// most maxRows, and, beyond the first, as many as keep the statement's
// estimated size (rowBytes each) under limit.
func (b *Batch) fitRows(cs []*change, maxRows, limit int, rowBytes func(*change) int) int {
	size := 0
	for n, c := range cs {
		if n == maxRows {
			return n
		}
		size += rowBytes(c)
		if n > 0 && size > limit {
			return n
		}
	}
	return len(cs)
}

// groupInsert writes multi-row INSERTs of the after images of cs, which
// carry every column:
//
//	INSERT INTO `db`.`t` (`a`,`b`) VALUES (?,?),(?,?)
func (b *Batch) groupInsert(t *Table, cs []*change) {
	limit, maxRows := b.limit(), b.maxGroupRows()
	shape := &t.insertAll
	for len(cs) > 0 {
		n := b.fitRows(cs, maxRows, limit, func(c *change) int {
			size := len(shape.group) + 1
			for _, i := range shape.cols {
				size += argSize(c.after[i])
			}
			return size
		})
		rows := cs[:n]
		cs = cs[n:]
		b.beginGroup(binlog.Insert, t, rows)
		b.buf = append(b.buf, shape.prefix...)
		for j, c := range rows {
			if j > 0 {
				b.buf = append(b.buf, ',')
			}
			b.buf = append(b.buf, shape.group...)
			for _, i := range shape.cols {
				b.push(c.after[i])
			}
		}
	}
}

// groupUpdate writes UPDATEs that set columns cols of the rows of cs to
// their after images, a CASE per column when there are several rows:
//
//	UPDATE `db`.`t` SET `c`=?, `d`=? WHERE `id`=?
//	UPDATE `db`.`t` SET `c`=CASE `id` WHEN ? THEN ? WHEN ? THEN ? ELSE `c` END WHERE `id` IN (?,?)
//	UPDATE `db`.`t` SET `c`=CASE WHEN `a`=? AND `b`=? THEN ? ... ELSE `c` END WHERE (`a`=? AND `b`=?) OR ...
//
// When cols is empty (nothing changed) the statement sets a column to
// itself, so that it still counts the rows it finds: UPDATE `db`.`t` SET
// `c`=`c` WHERE `id` IN (?,?). Rows are located by the key of keyImage,
// which for a key-changing update passed through is the before image.
func (b *Batch) groupUpdate(t *Table, cols []int, cs []*change) {
	limit, maxRows := b.limit(), b.maxGroupRows()
	if len(cols) > 0 {
		maxRows = min(maxRows, max(1, caseBudget/len(cols)))
	}
	single := len(t.Primary) == 1
	for len(cs) > 0 {
		n := b.fitRows(cs, maxRows, limit, func(c *change) int {
			k := keyBytes(t, c.keyImage()) + len(t.pk.eq)
			size := k + 8
			for _, i := range cols {
				size += k + argSize(c.after[i]) + 16
			}
			return size
		})
		rows := cs[:n]
		cs = cs[n:]
		b.beginGroup(binlog.Update, t, rows)
		b.buf = append(b.buf, "UPDATE "...)
		b.buf = append(b.buf, t.quoted...)
		b.buf = append(b.buf, " SET "...)
		switch {
		case len(cols) == 0:
			c := &t.Columns[t.touchColumn()]
			b.buf = append(b.buf, c.quoted...)
			b.buf = append(b.buf, '=')
			b.buf = append(b.buf, c.quoted...)
		case len(rows) == 1:
			for j, i := range cols {
				if j > 0 {
					b.buf = append(b.buf, ", "...)
				}
				c := &t.Columns[i]
				b.buf = append(b.buf, c.quoted...)
				b.buf = append(b.buf, '=')
				b.buf = append(b.buf, c.ph...)
				b.push(rows[0].after[i])
			}
		default:
			for j, i := range cols {
				if j > 0 {
					b.buf = append(b.buf, ", "...)
				}
				b.setCase(t, &t.Columns[i], i, rows, single)
			}
		}
		b.buf = append(b.buf, " WHERE "...)
		b.whereKeys(t, rows, single)
	}
}

// setCase appends `c`=CASE ... ELSE `c` END, which gives column c (index
// i) the value of each row's after image. ELSE keeps the value of a row
// the WHERE finds but no WHEN does, which cannot happen: both compare the
// same key values.
func (b *Batch) setCase(t *Table, c *Column, i int, cs []*change, single bool) {
	b.buf = append(b.buf, c.quoted...)
	b.buf = append(b.buf, "=CASE"...)
	if single {
		k := &t.Columns[t.Primary[0]]
		b.buf = append(b.buf, ' ')
		b.buf = append(b.buf, k.quoted...)
		for _, ch := range cs {
			b.buf = append(b.buf, " WHEN "...)
			b.buf = append(b.buf, k.wherePh...)
			b.push(ch.keyImage()[t.Primary[0]])
			b.buf = append(b.buf, " THEN "...)
			b.buf = append(b.buf, c.ph...)
			b.push(ch.after[i])
		}
	} else {
		for _, ch := range cs {
			b.buf = append(b.buf, " WHEN "...)
			b.keyEq(t, ch.keyImage())
			b.buf = append(b.buf, " THEN "...)
			b.buf = append(b.buf, c.ph...)
			b.push(ch.after[i])
		}
	}
	b.buf = append(b.buf, " ELSE "...)
	b.buf = append(b.buf, c.quoted...)
	b.buf = append(b.buf, " END"...)
}

// touchColumn is the column an UPDATE that changes nothing sets to itself:
// the first that is neither generated nor in the key, else the first key
// column.
func (t *Table) touchColumn() int {
	for i := range t.Columns {
		if !t.Columns[i].Generated && !t.isKey(i) {
			return i
		}
	}
	return t.Primary[0]
}
