package binlog

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// Flavor says which server family wrote a binlog; GTIDs and logical clocks
// differ between them.
type Flavor uint8

// The flavors. FlavorUnknown is the zero value, before a format description
// event has been seen.
const (
	FlavorUnknown Flavor = iota
	FlavorMySQL
	FlavorMariaDB
)

func (f Flavor) String() string {
	switch f {
	case FlavorMySQL:
		return "mysql"
	case FlavorMariaDB:
		return "mariadb"
	}
	return "unknown"
}

// GTID identifies a transaction across servers. A MariaDB GTID is
// domain-server-seq; a MySQL GTID is uuid[:tag]:gno, kept here as SID, Tag
// and Seq. The zero GTID (Flavor unknown) means the transaction had none:
// an anonymous GTID on MySQL, or a binlog older than GTIDs.
type GTID struct {
	Flavor Flavor
	Domain uint32   // MariaDB gtid_domain_id
	Server uint32   // MariaDB server_id of the originating server
	SID    [16]byte // MySQL source UUID
	Tag    string   // MySQL 8.3+ GTID tag, usually empty
	Seq    uint64   // MariaDB seq_no or MySQL GNO
}

// IsZero reports whether the transaction had no GTID.
func (g GTID) IsZero() bool { return g.Flavor == FlavorUnknown }

// String formats the GTID as the server prints it: "0-1-42" or
// "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"; "" for no GTID.
func (g GTID) String() string {
	switch g.Flavor {
	case FlavorMariaDB:
		// One allocation: the string, formatted once per transaction.
		var b [3*20 + 2]byte
		s := strconv.AppendUint(b[:0], uint64(g.Domain), 10)
		s = strconv.AppendUint(append(s, '-'), uint64(g.Server), 10)
		s = strconv.AppendUint(append(s, '-'), g.Seq, 10)
		return string(s)
	case FlavorMySQL:
		s := formatUUID(g.SID)
		if g.Tag != "" {
			s += ":" + g.Tag
		}
		return s + ":" + strconv.FormatUint(g.Seq, 10)
	}
	return ""
}

func formatUUID(b [16]byte) string {
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// parseMariaDBGTID reads s as MariaDB writes a GTID, domain-server-sequence
// in decimal within their ranges, without allocating: Covers reads a
// position's entries with it once a transaction.
func parseMariaDBGTID(s string) (GTID, bool) {
	d, rest, ok1 := strings.Cut(s, "-")
	srv, seq, ok2 := strings.Cut(rest, "-")
	if !ok1 || !ok2 {
		return GTID{}, false
	}
	dv, err1 := strconv.ParseUint(d, 10, 32)
	sv, err2 := strconv.ParseUint(srv, 10, 32)
	nv, err3 := strconv.ParseUint(seq, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return GTID{}, false
	}
	return GTID{Flavor: FlavorMariaDB, Domain: uint32(dv), Server: uint32(sv), Seq: nv}, true
}

// ParseGTID parses one GTID in either flavor's text form.
func ParseGTID(s string) (GTID, error) {
	s = strings.TrimSpace(s)
	if g, ok := parseMariaDBGTID(s); ok {
		return g, nil
	}
	parts := strings.Split(s, ":")
	if len(parts) == 2 || len(parts) == 3 {
		raw, err := hex.DecodeString(strings.ReplaceAll(parts[0], "-", ""))
		seq, err2 := strconv.ParseUint(parts[len(parts)-1], 10, 64)
		if err == nil && err2 == nil && len(raw) == 16 {
			g := GTID{Flavor: FlavorMySQL, Seq: seq}
			copy(g.SID[:], raw)
			if len(parts) == 3 {
				g.Tag = parts[1]
			}
			return g, nil
		}
	}
	return GTID{}, fmt.Errorf("binlog: %q is not a MariaDB (domain-server-seq) or MySQL (uuid:gno) GTID", s)
}
