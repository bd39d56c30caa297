// Package relaylog is the durable local spool between the receiver and the
// scheduler: the receiver appends complete source transactions as raw
// events, the scheduler tails the log and applies them, and the log is
// purged behind the target's checkpoint. It survives restarts and crashes
// (SIGKILL, power loss) and lets receiving run ahead of applying, within a
// bound on disk use.
//
// # Records and indexes
//
// Every transaction gets a relay index, contiguous from 1 over the log's
// life. Indexes of transactions that survive are never reused; a crash may
// cut an unsynced tail (see Durability), and the indexes of what was cut are
// given again to the transactions appended next. Each transaction also
// carries an opaque resume position from the receiver (Record.Resume), so
// that after a restart the receiver continues streaming just after the last
// transaction the log kept (Log.Resume).
//
// # On-disk format
//
// A log is a directory of segment files named relay-%016d.seg, where the
// number is the relay index of the segment's first transaction, and a LOCK
// file that one process at a time holds (flock). All integers are little
// endian. A segment starts with a 32-byte header:
//
//	0   [4]byte  magic "PRLY"
//	4   u16      format version (1)
//	6   u16      header size (32)
//	8   u64      first index (must equal the file name's number)
//	16  i64      creation time, Unix nanoseconds
//	24  u32      reserved, 0
//	28  u32      CRC32-C of bytes 0..27
//
// followed by records, each
//
//	u32 payload length | u32 CRC32-C of type and payload | u8 type | payload
//
// Strings and byte strings in payloads are a uvarint length and the bytes;
// a GTID is a flavor byte (0 none, 1 MySQL, 2 MariaDB) then, for MariaDB,
// u32 domain, u32 server and u64 sequence, or for MySQL the 16-byte source
// UUID, the tag as a string and the u64 GNO. The record types are:
//
//	POSITION (3)  always the first record of a segment: u64 index of the
//	              last transaction before the segment, its GTID, its resume
//	              position (a string). It makes every segment, even an empty
//	              one, say where the log stands.
//	FORMAT (1)    source file name (string), uvarint offset, and the raw
//	              format description event (the rest of the payload). It
//	              applies to the TXN records after it; a segment holds one
//	              before its first TXN, so each segment can be read alone.
//	TXN (2)       u64 relay index, GTID, source file name (string), resume
//	              position (string), uvarint event count, then per event a
//	              uvarint source offset, a uvarint length and the raw event
//	              (header, body, CRC32 trailer if the source has one).
//	PART (4)      a piece of a large transaction, encoded as a TXN record
//	              without GTID and resume position; the pieces of one
//	              transaction come in order before its TXN record, which
//	              holds the last piece, all in one segment. Readers step
//	              over them (reading only the index) and hand out where
//	              they are (Entry.Parts); ReadPart reads and checks one.
//	              Recovery cuts pieces that no TXN record follows.
//
// # Durability and recovery
//
// Append writes through a buffered writer and hands each transaction to the
// kernel before it returns, so readers in this process and a restarted
// process after SIGKILL see it. AppendHeld lets the buffer gather
// transactions (up to HeldBytes) until Flush or the next Append: one write
// system call for many, at the price that readers see them later and that
// a crash of the process loses them, as it loses the receiver's position
// past them. When it reaches the disk depends on the
// SyncPolicy: every transaction, every interval (checked by Append itself,
// and Sync and Close), or never (then only Close syncs). Unless the policy
// is SyncNever, a segment is synced before the next one is created, and a
// new segment's header and POSITION record are synced before any
// transaction goes into it, so only the last segment can have an unsynced
// tail. Losing that tail is allowed: the
// receiver resumes from Log.Resume, which is the position of the last
// transaction kept, and the source resends the rest.
//
// Open therefore checks only the last segment: it verifies every record and
// truncates the file at the first torn or damaged one, logging what it cut.
// A last segment whose header or POSITION record is damaged (a crash while
// it was being created) is removed when an older segment exists. Damage in
// an older segment is found when a Reader reaches it: Next returns a
// *CorruptError naming the file, the byte offset and the relay index, which
// matches ErrCorrupt. No input bytes make this package panic.
//
// # Bounded disk use
//
// When the segments would exceed Options.MaxBytes, Append waits (it does not
// fail) until Purge frees space or its context is done, and Stats reports
// the time spent waiting. Purge deletes only whole segments, and never the
// one being written. So that this cannot deadlock, Purge(upTo) is
// remembered: a segment that qualifies only once it is sealed is deleted
// when Append seals it. An applier that has caught up and purged once
// therefore never leaves Append waiting: with every sealed segment gone,
// the segment being written and the new record fit in SegmentBytes, which
// is at most MaxBytes. A new segment is started before Append waits for
// room for its first record (the segment it seals could not be purged
// otherwise), so the log may exceed MaxBytes by that segment's header and
// POSITION record (about 60 bytes and the resume position) while Append
// waits. A transaction that cannot fit even in an empty log is ErrTooLarge.
//
// # Concurrency
//
// One Log may be used by any number of goroutines: Append, Sync, Purge,
// Stats and the accessors are safe for concurrent use, and any number of
// Readers may tail the log, each with its own file handle; a Reader itself
// is used by one goroutine at a time. Appends are serialized. Readers read
// what is in the files, never the appender's memory, so a reader in a
// restarted process reads exactly what survived.
package relaylog
