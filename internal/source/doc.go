// Package source connects to a MySQL or MariaDB source as a replica and
// writes the complete transactions it receives to the relay log.
//
// One goroutine reads the replication stream (go-mysql's client connects;
// dump.go asks for the binlog and reads the events into reused memory:
// they are not decoded here, only framed into transactions).
// When the connection breaks, the source restarts or a heartbeat is missed,
// the partial transaction is dropped and the stream is requested again,
// after a backoff, from the position after the last transaction the relay
// log holds: what was received durably is never asked for twice, and what
// was not is asked for again.
package source
