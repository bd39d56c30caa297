// Package clone seeds a stream's target from a live MariaDB source: it
// copies the tables the stream replicates, with their definitions and
// objects, as of one position of the source's binlog, and leaves the
// stream's checkpoint at that position, where replicate starts
// (docs/clone.md says it for operators).
//
// # One position
//
// A reader session's consistent snapshot names its binlog position
// (snapshot.go): one reader needs no lock; several are opened while the
// source's commits are blocked for a moment (BACKUP STAGE BLOCK_COMMIT),
// so that they see the same transactions. Everything a run copies is as
// of its snapshot; the hand-over to replicate is then plain replication
// from one position, exact at any binlog format. (Copying each table at
// its own position and filtering the binlog per table afterwards, as
// Vitess does, cannot be exact for statement-format events, which are
// not split by table or row.)
//
// # Stages
//
// Run opens the servers and the stream's bookkeeping and takes the
// stream's lock (run.go), opens the snapshot, reads the catalog under
// the stream's filters (catalog.go), creates what a first run creates or
// settles what killed runs left (plan.go, resume.go), then copyRows
// (copy.go): readers read each table's holes chunk by chunk in key order
// (reader.go, with verify's Keys), workers write each chunk and its
// progress row in one target transaction (writer.go), and a table whose
// rows are all in gets its deferred indexes and triggers (finish.go).
// The rows read and not written are bounded by count (the chunks
// channel) and bytes (chunk.go's budget).
//
// # Resuming
//
// Progress is kept by key range (holes.go): a run reads segments chunk by
// chunk; holes are found from the chunks committed, by equality of their
// bounds alone. A resumed run brings the tables copied whole forward
// from the binlog with replicate (forward.go) and compares the chunks of
// tables copied in part with its snapshot, writing the rows that differ
// (mend.go), before reading the holes.
package clone
