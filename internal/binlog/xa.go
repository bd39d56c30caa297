package binlog

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// An XA transaction is logged in two groups: XA START ... XA END with the
// rows, closed by an XA_PREPARE_LOG_EVENT, and later a standalone XA COMMIT
// or XA ROLLBACK statement. Both name the transaction by its XID; this file
// reads the XID from each into one canonical text, the form the server
// itself writes into the binlog: X'gtrid',X'bqual',formatID (hex digits in
// upper case).

// formatXID is the canonical text of an XID.
func formatXID(gtrid, bqual []byte, formatID int64) string {
	return fmt.Sprintf("X'%s',X'%s',%d", strings.ToUpper(hex.EncodeToString(gtrid)), strings.ToUpper(hex.EncodeToString(bqual)), formatID)
}

// xaPrepareXID reads an XA_PREPARE_LOG_EVENT body (without the checksum):
// one_phase (1 byte), formatID (4), gtrid length (4), bqual length (4),
// then gtrid and bqual. onePhase is MySQL's XA COMMIT ... ONE PHASE, which
// it logs as this event after the rows: the group commits, nothing is
// prepared.
func xaPrepareXID(body []byte) (xid string, onePhase bool, err error) {
	if len(body) < 13 {
		return "", false, fmt.Errorf("%w: XA PREPARE event of %d bytes", ErrCorrupt, len(body))
	}
	formatID := int64(int32(binary.LittleEndian.Uint32(body[1:])))
	gl := int(binary.LittleEndian.Uint32(body[5:]))
	bl := int(binary.LittleEndian.Uint32(body[9:]))
	data := body[13:]
	if gl < 0 || bl < 0 || gl > 64 || bl > 64 || gl+bl > len(data) {
		return "", false, fmt.Errorf("%w: XA PREPARE event with an XID of %d+%d bytes in %d", ErrCorrupt, gl, bl, len(data))
	}
	return formatXID(data[:gl], data[gl:gl+bl], formatID), body[0] != 0, nil
}

// xaOnePhase reports whether an XA COMMIT statement ends with ONE PHASE.
func xaOnePhase(q string) bool {
	f := strings.Fields(strings.ToUpper(strings.TrimRight(strings.TrimSpace(q), "; ")))
	return len(f) >= 2 && f[len(f)-2] == "ONE" && f[len(f)-1] == "PHASE"
}

// parseXID reads the XID of an XA COMMIT or XA ROLLBACK statement: gtrid
// [, bqual [, formatID]], each string as 'text', X'hex' or 0xhex.
func parseXID(q string) (string, error) {
	rest := trimLeadingComments(trimLeadingComments(q)[len("XA"):])
	rest = strings.TrimSpace(trimLeadingComments(rest)[len(firstWord(rest)):]) // COMMIT or ROLLBACK
	var parts [2][]byte
	formatID := int64(1)
	for i := 0; ; i++ {
		rest = strings.TrimSpace(rest)
		if i == 2 {
			end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
			if end < 0 {
				end = len(rest)
			}
			n, err := strconv.ParseInt(rest[:end], 10, 64)
			if err != nil {
				return "", fmt.Errorf("%w: XID format id in %q", ErrCorrupt, abbreviateQuery(q))
			}
			formatID = n
			break
		}
		v, tail, err := xidString(rest)
		if err != nil {
			return "", fmt.Errorf("%w: XID in %q: %v", ErrCorrupt, abbreviateQuery(q), err)
		}
		parts[i] = v
		rest = strings.TrimSpace(tail)
		if !strings.HasPrefix(rest, ",") {
			break
		}
		rest = rest[1:]
	}
	return formatXID(parts[0], parts[1], formatID), nil
}

// xidString reads one string literal of an XID and returns its bytes and
// what follows it.
func xidString(s string) ([]byte, string, error) {
	switch {
	case len(s) >= 2 && (s[0] == 'X' || s[0] == 'x') && s[1] == '\'':
		end := strings.IndexByte(s[2:], '\'')
		if end < 0 {
			return nil, "", fmt.Errorf("unterminated hex string")
		}
		b, err := hex.DecodeString(s[2 : 2+end])
		return b, s[3+end:], err
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		end := 2
		for end < len(s) && strings.IndexByte("0123456789abcdefABCDEF", s[end]) >= 0 {
			end++
		}
		b, err := hex.DecodeString(s[2:end])
		return b, s[end:], err
	case len(s) > 0 && (s[0] == '\'' || s[0] == '"'):
		var b []byte
		q := s[0]
		for i := 1; i < len(s); i++ {
			switch {
			case s[i] == '\\' && i+1 < len(s):
				i++
				b = append(b, s[i])
			case s[i] == q && i+1 < len(s) && s[i+1] == q:
				i++
				b = append(b, q)
			case s[i] == q:
				return b, s[i+1:], nil
			default:
				b = append(b, s[i])
			}
		}
		return nil, "", fmt.Errorf("unterminated string")
	}
	return nil, "", fmt.Errorf("not a string literal")
}

func abbreviateQuery(q string) string {
	if len(q) > 100 {
		return q[:100] + "..."
	}
	return q
}
