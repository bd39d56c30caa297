package binlog

// ColumnsFunc says which of the columns of table schema.table (columns of
// them, as its table map counts them) a reader of the rows needs: the
// others may be left nil in the images. nil: all of them.
type ColumnsFunc func(schema, table string, columns int) []bool

// SetColumns makes the decoder leave out of the row images the values of
// the columns f does not ask for, where it reads the images itself (tables
// whose columns are all integers and strings, as most OLTP tables are):
// stepping over a value costs less than making one. Rows.Present still
// tells which columns an image holds. For a reader that needs only some
// columns, such as the keys the writesets hash (paraply analyze); nil, the
// default, decodes every value.
func (d *Decoder) SetColumns(f ColumnsFunc) { d.rowsDec.columns = f }

// SetColumns is Decoder.SetColumns for the reader's decoder.
func (r *Reader) SetColumns(f ColumnsFunc) { r.decoder.SetColumns(f) }
