package deptrack

import (
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strings"
	"unsafe"

	"github.com/paraply/paraply/internal/binlog"
	"github.com/paraply/paraply/internal/schema"
)

// seed is shared by every Extractor of the process, so keys from different
// extractors (analyze runs several trackers on one stream) compare equal.
var seed = maphash.MakeSeed()

// Writeset is what one transaction writes, described for the tracker.
type Writeset struct {
	// Keys are hashes of (schema, table, unique key, values) for every
	// primary and unique key of every before and after image, and of the
	// referenced parent key of every foreign key; deduplicated.
	Keys []uint64
	// Refs describe Keys for humans (parallel to Keys) when the Extractor
	// was asked to explain.
	Refs []KeyRef
	// Shared and Exclusive are table tokens (see the package comment).
	Shared, Exclusive []uint64
	// Barrier is set when the transaction cannot be described by keys.
	Barrier Cause
	// Notes are non-barrier causes that widened the writeset (keyless
	// tables, cascading foreign keys).
	Notes []Cause
	// Table names the table behind Barrier or the last note, if any.
	Table string
	// ReadsConnectionID is set when a statement-format statement of the
	// transaction may read its session's connection id: its text names
	// CONNECTION_ID or pseudo_thread_id, or its table has a column whose
	// default or generation expression calls CONNECTION_ID(). A statement
	// with keys reads nothing else that could (no stored function, no
	// trigger, no view: see statementKeys).
	ReadsConnectionID bool
	// Statements are the statement-format statements that got keys, each
	// of a table whose primary key is one column that stmtmerge may merge
	// statements by (see StatementKey).
	Statements []StatementKey
}

// StatementKey is a statement of Writeset.Statements: its index in
// binlog.Txn.Statements, its table, and the name of the one column of the
// table's primary key, whose value in the statement's text is the one row
// it writes or a row it may write: an integer, or a plain string whose
// collation tells rows apart by no more than letter case (see
// stmtmerge).
type StatementKey struct {
	Index  int
	Table  schema.TableName
	Column string
}

// KeyRef says which row key a hash stands for.
type KeyRef struct {
	Table string // `db`.`t`
	Index string // index name, or "fk(col,...)" for a referenced non-unique column list
	Rows  *binlog.Rows
	Image int // index into Rows.Images
	Cols  []int
	// Text is the key's values when a statement's text gave them (Rows
	// is nil then).
	Text string
}

// Label renders the key as `db`.`t`.PRIMARY(5).
func (r KeyRef) Label() string {
	var b strings.Builder
	b.WriteString(r.Table)
	b.WriteString(".")
	b.WriteString(r.Index)
	b.WriteString("(")
	if r.Rows == nil {
		b.WriteString(r.Text + ")")
		return b.String()
	}
	img := r.Rows.Images[r.Image]
	for i, c := range r.Cols {
		if i > 0 {
			b.WriteString(",")
		}
		v := img[c]
		if bs, ok := v.([]byte); ok {
			v = string(bs)
		}
		s := fmt.Sprint(v)
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		b.WriteString(s)
	}
	b.WriteString(")")
	return b.String()
}

func (w *Writeset) reset() {
	w.Keys, w.Refs, w.Shared, w.Exclusive, w.Notes = w.Keys[:0], w.Refs[:0], w.Shared[:0], w.Exclusive[:0], w.Notes[:0]
	w.Barrier, w.Table, w.ReadsConnectionID = CauseNone, "", false
	w.Statements = w.Statements[:0]
}

// Reset empties w: the writeset of a transaction that writes nothing the
// tracker needs to know (one the target already has).
func (w *Writeset) Reset() { w.reset() }

func (w *Writeset) barrier(c Cause, table string) {
	w.Barrier, w.Table = c, table
}

func (w *Writeset) note(c Cause, table string) {
	if !slices.Contains(w.Notes, c) {
		w.Notes = append(w.Notes, c)
	}
	w.Table = table
}

// Extractor computes writesets from row images and a schema catalog.
// It caches a plan per table; call Invalidate after the catalog changes.
// Not safe for concurrent use.
type Extractor struct {
	catalog *schema.Catalog
	// Explain fills Writeset.Refs (costs an allocation per key).
	Explain bool
	plans   map[*schema.Table]*tablePlan
	h       maphash.Hash
	buf     []byte
}

// NewExtractor extracts writesets using cat for keys.
func NewExtractor(cat *schema.Catalog) *Extractor {
	x := &Extractor{catalog: cat, plans: map[*schema.Table]*tablePlan{}}
	x.h.SetSeed(seed)
	return x
}

// Catalog is the schema catalog the extractor reads.
func (x *Extractor) Catalog() *schema.Catalog { return x.catalog }

// Columns says which of the columns of table schemaName.name (columns of
// them, as a table map counts them) the writesets read: those of its keys
// (primary, unique, referenced column lists, foreign keys); nil, all of
// them, for a table whose keys are not known. It is a binlog.ColumnsFunc,
// for a decoder that can leave the other values out; like the writesets,
// it follows the catalog up to the last Invalidate.
func (x *Extractor) Columns(schemaName, name string, columns int) []bool {
	tbl := x.catalog.Table(schemaName, name)
	if tbl == nil || x.catalog.Unknown(schemaName, name) {
		return nil
	}
	p := x.plan(tbl)
	if len(p.columns) != columns {
		p.columns = make([]bool, columns)
		for _, k := range p.keys {
			for _, c := range k.cols {
				if c < columns {
					p.columns[c] = true
				}
			}
		}
	}
	return p.columns
}

// Invalidate forgets cached table plans; call it after any DDL.
func (x *Extractor) Invalidate() { clear(x.plans) }

// Extract fills ws with t's writeset, reusing ws's slices.
func (x *Extractor) Extract(t *binlog.Txn, ws *Writeset) {
	ws.reset()
	switch {
	case t.DDL:
		ws.barrier(CauseDDL, "")
		return
	case t.StatementDML:
		if ok, table := x.statements(t, ws); !ok {
			ws.reset()
			ws.barrier(CauseStatement, table)
			return
		}
	case t.Large:
		ws.barrier(CauseLarge, "")
		return
	}
	for _, r := range t.Rows {
		if !x.rows(r, ws) {
			return
		}
	}
	if len(ws.Keys) > 1 {
		ws.dedupe()
	}
}

// rows adds one rows event's keys; false when it made ws a barrier.
func (x *Extractor) rows(r *binlog.Rows, ws *Writeset) bool {
	tbl := x.catalog.Table(r.Schema(), r.Name())
	// The quoted name only where a writeset notes its table: most have none.
	name := func() string { return schema.TableName{Schema: r.Schema(), Name: r.Name()}.String() }
	if tbl == nil || x.catalog.Unknown(r.Schema(), r.Name()) {
		ws.barrier(CauseUnknownTable, name())
		return false
	}
	if len(tbl.Columns) != int(r.Table.ColumnCount) {
		// The hidden hash columns of long unique keys follow the table's
		// own; no key hashes them.
		if _, ok := tbl.HashColumns(r.Table.ColumnNameString(), r.Table.ColumnType); !ok {
			ws.barrier(CauseSchemaMismatch, name())
			return false
		}
	}
	p := x.plan(tbl)
	if p.keyless {
		ws.Exclusive = append(ws.Exclusive, p.token)
		ws.note(CauseKeyless, name())
	}
	if p.cascadeChild {
		ws.Shared = append(ws.Shared, p.token)
	}
	if r.Op != binlog.Insert && len(p.cascades) > 0 {
		ws.Exclusive = append(ws.Exclusive, p.cascades...)
		ws.note(CauseCascade, name())
	}
	for i := range r.Images {
		after := r.Op == binlog.Insert || (r.Op == binlog.Update && i%2 == 1)
		for k := range p.keys {
			if c := x.addKey(ws, r, i, after, &p.keys[k]); c != CauseNone {
				ws.barrier(c, name())
				return false
			}
		}
	}
	return true
}

// addKey hashes one key of one image; a NULL part skips the key (NULLs never
// collide in a unique index).
//
// With binlog_row_image=MINIMAL an update's after image holds only the
// columns it set, and its before image only the primary key: a key column
// the after image lacks is unchanged, so it is the before image's; a key
// none of whose columns the update set, and which the images lack, keeps
// its value, which the update neither takes nor frees, so it needs no
// hash. Any other missing column makes the key unknown.
func (x *Extractor) addKey(ws *Writeset, r *binlog.Rows, image int, after bool, k *keyPlan) Cause {
	x.buf = append(x.buf[:0], k.prefix...)
	for i, c := range k.cols {
		v, ok := columnValue(r, image, after, c)
		if !ok {
			if r.Op == binlog.Update && !slices.ContainsFunc(k.cols, func(c int) bool { return r.Present(c, true) }) {
				return CauseNone
			}
			return CauseMissingKeyColumn
		}
		if v == nil {
			return CauseNone
		}
		x.buf = appendValue(x.buf, v, &k.parts[i])
		if x.buf == nil {
			return CausePartialJSON
		}
		x.buf = append(x.buf, 0x1f)
	}
	x.h.Reset()
	x.h.Write(x.buf)
	ws.Keys = append(ws.Keys, x.h.Sum64())
	if x.Explain {
		ws.Refs = append(ws.Refs, KeyRef{Table: k.table, Index: k.name, Rows: r, Image: image, Cols: k.cols})
	}
	return CauseNone
}

// columnValue returns column c of an image, taking an update's unchanged
// column from its before image; false if the images do not hold it.
func columnValue(r *binlog.Rows, image int, after bool, c int) (any, bool) {
	if r.Present(c, after) {
		return r.Images[image][c], true
	}
	if after && r.Op == binlog.Update && r.Present(c, false) {
		return r.Images[image-1][c], true
	}
	return nil, false
}

// appendValue appends a canonical encoding of v; nil for a value that cannot
// be a key (a partial JSON diff).
func appendValue(dst []byte, v any, p *partPlan) []byte {
	switch v := v.(type) {
	case int8:
		return appendInteger(dst, int64(v), p)
	case int16:
		return appendInteger(dst, int64(v), p)
	case int32:
		return appendInteger(dst, int64(v), p)
	case int64:
		return appendInteger(dst, v, p)
	case int:
		return appendInteger(dst, int64(v), p)
	case uint8:
		return appendInt(dst, int64(v))
	case uint16:
		return appendInt(dst, int64(v))
	case uint32:
		return appendInt(dst, int64(v))
	case uint64:
		return appendUnsigned(dst, v)
	case float32:
		return appendFloat(dst, float64(v))
	case float64:
		return appendFloat(dst, v)
	case string:
		return p.coll.Append(append(dst, 's'), unsafe.Slice(unsafe.StringData(v), len(v)), p.prefix)
	case []byte:
		return p.coll.Append(append(dst, 's'), v, p.prefix)
	}
	if fmt.Sprintf("%T", v) == "*replication.JsonDiff" {
		return nil
	}
	return append(append(dst, 'x'), fmt.Sprint(v)...)
}

// appendFloat encodes a FLOAT or DOUBLE value; -0 is 0, as the server
// compares them.
func appendFloat(dst []byte, v float64) []byte {
	if v == 0 {
		v = 0
	}
	return binary.LittleEndian.AppendUint64(append(dst, 'f'), math.Float64bits(v))
}

// appendInteger encodes v, an integer of the column p folds as: a negative
// value of an UNSIGNED column, which a row image without signedness gives,
// as the unsigned value it is, so that it keys as the same value decoded
// with signedness, or written as a literal, does.
func appendInteger(dst []byte, v int64, p *partPlan) []byte {
	if v < 0 && p.unsigned > 0 {
		u := uint64(v)
		if p.unsigned < 64 {
			u &= 1<<p.unsigned - 1
		}
		return appendUnsigned(dst, u)
	}
	return appendInt(dst, v)
}

// appendUnsigned encodes u as appendInt does where an int64 holds it.
func appendUnsigned(dst []byte, u uint64) []byte {
	if u <= math.MaxInt64 {
		return appendInt(dst, int64(u))
	}
	return binary.LittleEndian.AppendUint64(append(dst, 'u'), u)
}

func appendInt(dst []byte, v int64) []byte {
	return binary.LittleEndian.AppendUint64(append(dst, 'i'), uint64(v))
}

// dedupe sorts Keys (and Refs alongside) and drops repeats, so the tracker
// never sees a transaction conflict with itself.
func (w *Writeset) dedupe() {
	if len(w.Refs) == 0 {
		slices.Sort(w.Keys)
		w.Keys = slices.Compact(w.Keys)
		return
	}
	idx := make([]int, len(w.Keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case w.Keys[a] < w.Keys[b]:
			return -1
		case w.Keys[a] > w.Keys[b]:
			return 1
		}
		return a - b
	})
	keys := make([]uint64, 0, len(idx))
	refs := make([]KeyRef, 0, len(idx))
	for _, i := range idx {
		if n := len(keys); n > 0 && keys[n-1] == w.Keys[i] {
			continue
		}
		keys = append(keys, w.Keys[i])
		refs = append(refs, w.Refs[i])
	}
	w.Keys, w.Refs = keys, refs
}
