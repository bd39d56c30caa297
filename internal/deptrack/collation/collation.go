// Package collation turns string values into keys that are equal whenever
// MySQL or MariaDB would call the values equal under a column's collation,
// so that two rows the server sees as one unique key value get one writeset
// key.
//
// Keys are built from the collation's own weights: per-byte tables for the
// single-byte character sets, per-character tables for the Unicode
// collations (data/, written by ./gen from a MariaDB server and from DUCET
// 9.0.0), compared at primary strength for the UCA collations (an _as_ci
// or _as_cs collation gets its _ai_ci key: coarser, never finer). Keys may
// merge values the server keeps apart (that costs a needless wait), never
// the reverse. A collation without an exact table (language tailorings,
// Czech and Thai, the multi-byte Asian character sets) makes every value
// one key, and writers of such a unique key run one at a time.
//
// The tables are regenerated with ./gen (see its doc: it needs a MariaDB
// server package and DUCET files); TestServerEquality checks them against
// the server.
package collation

import (
	"strings"
	"sync"
)

// Collation makes keys for the values of one column.
type Collation struct {
	kind kind
	pad  bool // PAD SPACE: trailing spaces do not count
	enc  encoding
	b8   *byteTable
	uni  func() *uniTable
}

type kind uint8

const (
	constantKind kind = iota // the weights are not known: every value is one key
	binaryKind
	codepointKind // a _bin collation of a Unicode character set
	byteKind      // a single-byte character set's table
	unicodeKind   // a per-character table
)

var (
	mu       sync.Mutex
	resolved = map[[2]string]*Collation{}
)

// Lookup returns the collation of a column of character set charset and
// collation collation (as the catalog spells them). It never fails: what it
// cannot weigh makes every value one key.
func Lookup(charset, collation string) *Collation {
	k := [2]string{charset, collation}
	mu.Lock()
	defer mu.Unlock()
	if c, ok := resolved[k]; ok {
		return c
	}
	c := resolve(strings.ToLower(charset), strings.ToLower(collation))
	resolved[k] = c
	return c
}

// Exact reports whether values get keys of their own (false: every value
// is one key).
func (c *Collation) Exact() bool { return c.kind != constantKind }

// resolve maps a collation name to its weights.
func resolve(cs, co string) *Collation {
	if strings.HasPrefix(co, "utf8_") {
		co = "utf8mb3_" + co[len("utf8_"):]
	}
	if cs == "utf8" {
		cs = "utf8mb3"
	}
	if cs == "binary" || co == "binary" {
		return &Collation{kind: binaryKind}
	}
	if cs == "" {
		cs, _, _ = strings.Cut(co, "_")
	}
	pad := !strings.Contains(co, "_nopad_") && !strings.Contains(co, "_0900_")
	if t := eightBit(co); t != nil && strings.HasPrefix(co, cs+"_") {
		return &Collation{kind: byteKind, pad: pad, b8: t}
	}
	enc, ok := unicodeEncodings[cs]
	if !ok || !strings.HasPrefix(co, cs+"_") {
		return &Collation{}
	}
	rest := co[len(cs)+1:]
	c := &Collation{pad: pad, enc: enc}
	switch rest {
	case "bin", "nopad_bin", "0900_bin":
		c.kind = codepointKind
		return c
	case "general_ci", "general_nopad_ci":
		c.uni = table("utf8mb4_general_ci")
	case "unicode_ci", "unicode_nopad_ci":
		c.uni = table("utf8mb4_unicode_ci")
	case "unicode_520_ci", "unicode_520_nopad_ci":
		c.uni = table("utf8mb4_unicode_520_ci")
	case "uca1400_ai_ci", "uca1400_ai_cs", "uca1400_as_ci", "uca1400_as_cs",
		"uca1400_nopad_ai_ci", "uca1400_nopad_ai_cs", "uca1400_nopad_as_ci", "uca1400_nopad_as_cs":
		c.uni = table("utf8mb4_uca1400_ai_ci")
	case "0900_ai_ci", "0900_as_ci", "0900_as_cs":
		if cs != "utf8mb4" {
			return &Collation{}
		}
		c.uni = table("utf8mb4_0900_ai_ci")
	default:
		// Language tailorings (german2, danish, spanish2, de_pb_0900, ...)
		// make letter sequences one letter or split one in two; their
		// rules are not modelled.
		return &Collation{}
	}
	c.kind = unicodeKind
	return c
}

// Append appends the key of the string value v to dst. prefix > 0 keeps
// only the first prefix characters, as a prefix index does.
func (c *Collation) Append(dst, v []byte, prefix int) []byte {
	switch c.kind {
	case binaryKind:
		if prefix > 0 && len(v) > prefix {
			v = v[:prefix]
		}
		// BINARY(n) pads with zero bytes; trimming merges at worst.
		for len(v) > 0 && v[len(v)-1] == 0 {
			v = v[:len(v)-1]
		}
		return append(dst, v...)
	case byteKind:
		if prefix > 0 && len(v) > prefix {
			v = v[:prefix]
		}
		return c.b8.append(dst, v, c.pad)
	case codepointKind:
		return c.appendCodepoints(dst, v, prefix)
	case unicodeKind:
		return c.uni().append(dst, v, c.enc, prefix, c.pad)
	}
	return dst
}

// appendCodepoints appends the code points of v (a _bin collation compares
// them), without trailing spaces under PAD SPACE.
func (c *Collation) appendCodepoints(dst, v []byte, prefix int) []byte {
	start := len(dst)
	n := 0
	for len(v) > 0 && (prefix <= 0 || n < prefix) {
		r, size := c.enc.decode(v)
		v = v[size:]
		n++
		dst = append(dst, byte(r>>16), byte(r>>8), byte(r))
	}
	if c.pad {
		for len(dst)-start >= 3 && dst[len(dst)-3] == 0 && dst[len(dst)-2] == 0 && dst[len(dst)-1] == ' ' {
			dst = dst[:len(dst)-3]
		}
	}
	return dst
}
