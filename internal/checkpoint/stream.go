package checkpoint

import (
	"fmt"
	"regexp"
	"strings"
)

// Streams let one target follow several sources, as MariaDB's
// multi-source replication does (CHANGE MASTER 'name' TO ...): each
// stream is one paraply process applying one source, with its own
// bookkeeping database and its own lock, so that the exactly-once
// bookkeeping of one never reads or blocks another's. Stream
// DefaultStream keeps the database and lock paraply used before streams,
// so a target replicated before becomes stream "default" as it is.

// DefaultStream is the stream a command works on without --name (as
// MariaDB's default connection has the empty name).
const DefaultStream = "default"

// streamPrefix starts the bookkeeping database of every stream but the
// default one; long enough that a user's database is not taken for one.
const streamPrefix = Schema + "_stream_"

// validStream: a stream names a database, a lock, a directory and a
// systemd instance as it is.
var validStream = regexp.MustCompile(`^[a-z0-9][a-z0-9_]{0,31}$`)

// ValidStream checks a stream name: 1 to 32 lower-case letters, digits
// and underscores, starting with a letter or digit.
func ValidStream(name string) error {
	if !validStream.MatchString(name) {
		return fmt.Errorf("stream name %q: use 1 to 32 lower-case letters, digits and underscores, starting with a letter or digit", name)
	}
	return nil
}

// SchemaOf is the database holding stream's bookkeeping: paraply for the
// default stream, paraply_stream_NAME for the others.
func SchemaOf(stream string) string {
	if stream == "" || stream == DefaultStream {
		return Schema
	}
	return streamPrefix + stream
}

// StreamOf is the stream whose bookkeeping database schema is, and false
// if schema is no stream's.
func StreamOf(schema string) (string, bool) {
	switch {
	case schema == Schema:
		return DefaultStream, true
	case strings.HasPrefix(schema, streamPrefix) && validStream.MatchString(schema[len(streamPrefix):]):
		return schema[len(streamPrefix):], true
	}
	return "", false
}

// IsBookkeeping reports whether schema holds a stream's bookkeeping:
// never replicated, compared or fingerprinted.
func IsBookkeeping(schema string) bool {
	_, ok := StreamOf(schema)
	return ok
}

// BookkeepingSQL is an SQL condition, true for a column (such as
// TABLE_SCHEMA) that names no stream's bookkeeping database.
func BookkeepingSQL(column string) string {
	return fmt.Sprintf("%s <> '%s' AND %s NOT LIKE '%s%%'", column, Schema, column, strings.ReplaceAll(streamPrefix, "_", `\_`))
}

// lockNameOf is stream's lock (GET_LOCK): the default stream's is the
// lock paraply took before streams, so that a process of an older paraply
// and one of this, on the same target, still exclude each other.
func lockNameOf(stream string) string {
	if stream == "" || stream == DefaultStream {
		return lockName
	}
	return lockName + "." + stream
}

// sql puts the store's bookkeeping database in q, written for paraply's.
func (s *Store) sql(q string) string {
	if s.schema == "" || s.schema == Schema {
		return q
	}
	return strings.ReplaceAll(q, "`"+Schema+"`", "`"+s.schema+"`")
}
