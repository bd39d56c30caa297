package source

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/google/uuid"

	"github.com/paraply/paraply/internal/binlog"
)

// dump is one replication connection. go-mysql's client connects (the
// handshake, authentication, TLS); dump registers as a replica, asks for
// the binlog from a GTID set and reads the events the source sends into
// memory it reuses. go-mysql's BinlogSyncer did this with a goroutine, a
// channel and two allocations and copies per event, which cost about a
// tenth of paraply's CPU on a backlog.
type dump struct {
	conn *client.Conn
	br   *bufio.Reader
	seq  uint8 // of the next packet
	// buf holds the events read since the last release: the framer keeps
	// them until the transaction they belong to is relayed.
	buf []byte
}

// Sizes of dump's memory: the socket is read in windows of streamWindow
// bytes, and events are read into chunks of at least arenaChunk bytes.
const (
	streamWindow = 256 << 10
	arenaChunk   = 1 << 20
)

// errStreamEnded: the source answered the dump with an EOF packet, which
// it sends when it stops sending events (a non-blocking dump, or a
// server shutting down). The receiver reconnects.
var errStreamEnded = errors.New("the source ended the binlog stream")

// dumpConfig is what a dump needs of the receiver's Config.
type dumpConfig struct {
	cfg    Config
	dialer client.Dialer
	// wait and got mark the time spent blocked on the socket (watchdog).
	wait func(time.Time)
	got  func()
}

// openDump connects and asks for the binlog from pos.
func openDump(ctx context.Context, dc dumpConfig, pos mysql.GTIDSet) (*dump, error) {
	cfg := dc.cfg
	addr := net.JoinHostPort(cfg.Source.Host, strconv.Itoa(cfg.Source.Port))
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := client.ConnectWithDialer(cctx, "", addr, cfg.Source.User, cfg.Source.Password(), "", dc.dialer,
		func(c *client.Conn) error {
			c.SetTLSConfig(cfg.TLS)
			c.SetAttributes(map[string]string{"_client_role": "binary_log_listener"})
			return nil
		})
	if err != nil {
		return nil, err
	}
	d := &dump{conn: conn}
	if err := d.register(cfg); err != nil {
		d.close()
		return nil, err
	}
	if err := d.request(cfg, pos); err != nil {
		d.close()
		return nil, err
	}
	// Every answer to what was sent so far has been read: the stream
	// starts on the socket itself (go-mysql's client buffers nothing
	// more), which dump reads without go-mysql's per-packet copies.
	d.seq = conn.Sequence
	d.br = bufio.NewReaderSize(&waitReader{conn: conn.Conn.Conn, wait: dc.wait, got: dc.got}, streamWindow)
	return d, nil
}

// register sets what a replica tells the source before asking for its
// binlog (as MariaDB's and MySQL's replicas do) and sends
// COM_REGISTER_SLAVE.
func (d *dump) register(cfg Config) error {
	r, err := d.conn.Execute("SHOW GLOBAL VARIABLES LIKE 'BINLOG_CHECKSUM'")
	if err != nil {
		return err
	}
	if s, _ := r.GetString(0, 1); s != "" {
		// The replica understands checksums: the source sends its events
		// as its binlog holds them (the framer reads the algorithm from
		// the format description).
		if _, err := d.conn.Execute("SET @master_binlog_checksum = 'NONE', @source_binlog_checksum = 'NONE'"); err != nil {
			return err
		}
	}
	if cfg.Flavor != binlog.FlavorMySQL {
		// MARIA_SLAVE_CAPABILITY_GTID: the replica understands GTID events.
		if _, err := d.conn.Execute("SET @mariadb_slave_capability = 4"); err != nil {
			return err
		}
	}
	// The period is in nanoseconds.
	if _, err := d.conn.Execute("SET @master_heartbeat_period = ?, @source_heartbeat_period = ?",
		cfg.Heartbeat.Nanoseconds(), cfg.Heartbeat.Nanoseconds()); err != nil {
		return err
	}
	id := uuid.NewString()
	if _, err := d.conn.Execute("SET @slave_uuid = ?, @replica_uuid = ?", id, id); err != nil {
		return err
	}
	host, _ := os.Hostname()
	user := cfg.Source.User
	host, user = host[:min(len(host), 255)], user[:min(len(user), 255)]
	p := make([]byte, 4, 4+1+4+1+len(host)+1+len(user)+1+2+4+4)
	p = append(p, mysql.COM_REGISTER_SLAVE)
	p = binary.LittleEndian.AppendUint32(p, cfg.ServerID)
	p = append(append(p, byte(len(host))), host...)
	p = append(append(p, byte(len(user))), user...)
	p = append(p, 0) // no password
	p = binary.LittleEndian.AppendUint16(p, uint16(cfg.Source.Port))
	p = binary.LittleEndian.AppendUint32(p, 0) // replication rank, unused
	p = binary.LittleEndian.AppendUint32(p, 0) // source id: the source fills it in
	d.conn.ResetSequence()
	if err := d.conn.WritePacket(p); err != nil {
		return err
	}
	_, err = d.conn.ReadOKPacket()
	return err
}

// request asks for the binlog from the transactions after pos: MariaDB
// takes the position in @slave_connect_state and a plain COM_BINLOG_DUMP,
// MySQL a COM_BINLOG_DUMP_GTID.
func (d *dump) request(cfg Config, pos mysql.GTIDSet) error {
	var p []byte
	if cfg.Flavor == binlog.FlavorMySQL {
		set := pos.Encode()
		p = make([]byte, 4, 4+1+2+4+4+8+4+len(set))
		p = append(p, mysql.COM_BINLOG_DUMP_GTID)
		p = binary.LittleEndian.AppendUint16(p, 0) // flags: block, wait for events
		p = binary.LittleEndian.AppendUint32(p, cfg.ServerID)
		p = binary.LittleEndian.AppendUint32(p, 0) // no file name
		p = binary.LittleEndian.AppendUint64(p, 4) // position: the start of a file
		p = binary.LittleEndian.AppendUint32(p, uint32(len(set)))
		p = append(p, set...)
	} else {
		if _, err := d.conn.Execute("SET @slave_connect_state = ?", connectState(pos.String())); err != nil {
			return fmt.Errorf("setting the position to stream from (%s): %w", pos, err)
		}
		// As a replica with gtid_strict_mode: the source refuses to
		// stream a binlog whose GTIDs go backwards, or that lacks the
		// GTID asked for, instead of sending it.
		if _, err := d.conn.Execute("SET @slave_gtid_strict_mode = 1"); err != nil {
			return err
		}
		p = make([]byte, 4, 4+1+4+2+4)
		p = append(p, mysql.COM_BINLOG_DUMP)
		p = binary.LittleEndian.AppendUint32(p, 0) // position: @slave_connect_state says it
		p = binary.LittleEndian.AppendUint16(p, 0) // flags: block, wait for events
		p = binary.LittleEndian.AppendUint32(p, cfg.ServerID)
	}
	d.conn.ResetSequence()
	return d.conn.WritePacket(p)
}

// connectState is a MariaDB position as the source is asked for it: a
// domain at sequence number 0 (D-S-0, "from the domain's beginning": no
// transaction has that number) is left out, which asks for the domain from
// its first transaction in the source's binlogs. A native replica with
// gtid_strict_mode off reads D-S-0 so (it steps over the missing GTID to
// the next); paraply keeps strict mode for the domains it has a real
// position in.
func connectState(pos string) string {
	var keep []string
	for g := range strings.SplitSeq(pos, ",") {
		if p, err := binlog.ParseGTID(g); err != nil || p.Seq != 0 {
			keep = append(keep, g)
		}
	}
	return strings.Join(keep, ",")
}

// mayWait reports whether reading the next packet may wait for the
// network: the read window does not hold all of it.
func (d *dump) mayWait() bool {
	n := d.br.Buffered()
	if n < 4 {
		return true
	}
	h, _ := d.br.Peek(4)
	return n < 4+packetLen(h)
}

func packetLen(h []byte) int { return int(h[0]) | int(h[1])<<8 | int(h[2])<<16 }

// next returns the next event the source sent, at least a header long:
// in d's memory, kept until release.
func (d *dump) next() ([]byte, error) {
	p, err := d.readPacket()
	if err != nil {
		return nil, err
	}
	switch {
	case len(p) > binlog.HeaderSize && p[0] == mysql.OK_HEADER:
		return p[1:], nil
	case len(p) > 0 && p[0] == mysql.ERR_HEADER:
		return nil, d.conn.HandleErrorPacket(p)
	case len(p) > 0 && p[0] == mysql.EOF_HEADER && len(p) < 9:
		return nil, errStreamEnded
	}
	return nil, fmt.Errorf("%w: a replication packet of %d bytes that holds neither an event nor an error", binlog.ErrCorrupt, len(p))
}

// readPacket reads one protocol packet's payload into d.buf; a payload of
// 16 MiB or more comes in several packets, joined here.
func (d *dump) readPacket() ([]byte, error) {
	start := len(d.buf)
	var h [4]byte
	for {
		if _, err := io.ReadFull(d.br, h[:]); err != nil {
			return nil, fmt.Errorf("reading the binlog stream: %w", err)
		}
		if h[3] != d.seq {
			return nil, fmt.Errorf("reading the binlog stream: packet number %d, expected %d", h[3], d.seq)
		}
		d.seq++
		n := packetLen(h[:])
		start = d.room(start, n)
		at := len(d.buf)
		d.buf = d.buf[:at+n]
		if _, err := io.ReadFull(d.br, d.buf[at:]); err != nil {
			return nil, fmt.Errorf("reading the binlog stream: %w", err)
		}
		if n < mysql.MaxPayloadLen {
			return d.buf[start:], nil
		}
	}
}

// room makes room for n more bytes after d.buf[start:], the part of a
// payload read so far, and returns where that part starts now. A full
// chunk is left to the events that point into it and a new one taken.
func (d *dump) room(start, n int) int {
	if len(d.buf)+n <= cap(d.buf) {
		return start
	}
	part := d.buf[start:]
	buf := make([]byte, 0, max(arenaChunk, 2*(len(part)+n)))
	d.buf = append(buf, part...)
	return 0
}

// release lets the memory of every event next returned be reused: the
// caller holds none of them any more. A chunk grown for a large event is
// dropped rather than kept.
func (d *dump) release() {
	if cap(d.buf) > arenaChunk {
		d.buf = nil
		return
	}
	d.buf = d.buf[:0]
}

// close ends the connection; the source ends its dump thread when it
// next writes to it. An error closing is of no use: the stream is over.
func (d *dump) close() { _ = d.conn.Close() }

// waitReader is the socket under the stream's read window: each read may
// block, and the watchdog is told how long.
type waitReader struct {
	conn net.Conn
	wait func(time.Time)
	got  func()
}

func (w *waitReader) Read(p []byte) (int, error) {
	w.wait(time.Now())
	n, err := w.conn.Read(p)
	w.got()
	return n, err
}
