package sqlgen

// DefaultMaxPacket is the size, in bytes of SQL text and estimated
// argument text, beyond which Packet starts another packet. With every
// argument escaped to twice its size a packet stays under MariaDB's
// default max_allowed_packet (16 MiB).
const DefaultMaxPacket = 4 << 20

// stmtAt is where a statement starts in a Batch: offsets in its text, its
// arguments and its estimated argument bytes.
type stmtAt struct {
	buf, args, argBytes int
}

// Packet returns the statements of the batch from the i-th on that fit in
// maxBytes (0: DefaultMaxPacket), at least one, as one multi-statement
// text and its arguments, and the index of the first statement after
// them. A transaction too large for one packet, such as one of a million
// rows, is sent as several, in order, in the same session: it stays one
// target transaction, and the affected-row counts of the packets, in
// order, are those of the whole batch.
func (b *Batch) Packet(i, maxBytes int) (query string, args []any, next int) {
	b.flush()
	if maxBytes <= 0 {
		maxBytes = DefaultMaxPacket
	}
	start := b.starts[i]
	j := b.span(i, maxBytes, 0)
	end := b.end(j - 1)
	if j < len(b.expects) {
		end.buf-- // the separator before statement j
	}
	return string(b.buf[start.buf:end.buf]), b.args[start.args:end.args], j
}

// end returns where statement i ends: where the next one starts (its
// separator included), or the end of the batch.
func (b *Batch) end(i int) stmtAt {
	if i+1 < len(b.expects) {
		return b.starts[i+1]
	}
	return stmtAt{buf: len(b.buf), args: len(b.args), argBytes: b.argBytes}
}
