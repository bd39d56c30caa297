package collation

import (
	"compress/flate"
	"embed"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

//go:embed data/*.bin
var data embed.FS

func readData(name string) []byte {
	f, err := data.Open("data/" + name + ".bin")
	if err != nil {
		panic(err)
	}
	defer f.Close()
	b, err := io.ReadAll(flate.NewReader(f))
	if err != nil {
		panic(fmt.Sprintf("collation: data/%s.bin: %v", name, err))
	}
	return b
}

// byteTable is a single-byte character set's collation: each byte weighs
// as zero or more weight bytes.
type byteTable struct {
	simple bool      // every byte weighs one weight byte, one[b]
	one    [256]byte // the weight of each byte when simple
	multi  [256]string
	space  byte // the weight of ' '
}

var (
	eightOnce   sync.Once
	eightTables map[string]*byteTable
)

// eightBit returns the table of a single-byte collation, or nil.
func eightBit(name string) *byteTable {
	eightOnce.Do(func() {
		eightTables = map[string]*byteTable{}
		b := readData("eightbit")
		for len(b) > 0 {
			n, k := binary.Uvarint(b)
			name := string(b[k : k+int(n)])
			b = b[k+int(n):]
			t := &byteTable{simple: true}
			for i := range 256 {
				w := int(b[0])
				t.multi[i] = string(b[1 : 1+w])
				if w == 1 {
					t.one[i] = b[1]
				} else {
					t.simple = false
				}
				b = b[1+w:]
			}
			t.space = t.one[' ']
			if len(t.multi[' ']) != 1 {
				panic("collation: " + name + ": space does not weigh one byte")
			}
			eightTables[name] = t
		}
	})
	return eightTables[name]
}

func (t *byteTable) append(dst, v []byte, pad bool) []byte {
	start := len(dst)
	if t.simple {
		for _, c := range v {
			dst = append(dst, t.one[c])
		}
	} else {
		for _, c := range v {
			dst = append(dst, t.multi[c]...)
		}
	}
	if pad {
		for len(dst) > start && dst[len(dst)-1] == t.space {
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}

// uniTable maps each code point to its key units. An entry with bit 0 set
// is units[e>>6 : e>>6 + (e>>1)&31]; another non-zero entry is formula
// (e>>1)-1: units computed from the code point (runs of implicit weights
// and of weights that grow with the code point); zero is a code point the
// table lacks (none but surrogates), which keys as itself.
type uniTable struct {
	pages    [0x1100]*[256]uint32
	units    []uint16
	formulas []formula
	space    uint16 // the unit of ' '
}

// formula is a run's rule: n = 1 gives [cp + delta], n = 2 gives [first,
// cp + delta].
type formula struct {
	n     uint8
	first uint16
	delta uint16
}

var (
	tablesMu sync.Mutex
	tables   = map[string]func() *uniTable{}
)

// table returns a loader of the named per-character table, read on first
// use and shared.
func table(name string) func() *uniTable {
	tablesMu.Lock()
	defer tablesMu.Unlock()
	if f, ok := tables[name]; ok {
		return f
	}
	f := sync.OnceValue(func() *uniTable { return decodeTable(name, readData(name)) })
	tables[name] = f
	return f
}

// decodeTable reads the runs gen wrote (see encode there).
func decodeTable(name string, b []byte) *uniTable {
	t := &uniTable{}
	fidx := map[formula]uint32{}
	pages := map[[256]uint32]*[256]uint32{}
	var cur [256]uint32
	curPage := -1
	flush := func() {
		if curPage < 0 {
			return
		}
		p, ok := pages[cur]
		if !ok {
			p = new([256]uint32)
			*p = cur
			pages[cur] = p
		}
		t.pages[curPage] = p
		cur = [256]uint32{}
	}
	set := func(r rune, e uint32) {
		if pg := int(r >> 8); pg != curPage {
			flush()
			curPage = pg
		}
		cur[r&0xFF] = e
	}
	next := rune(0)
	for len(b) > 0 {
		d, k1 := binary.Uvarint(b)
		count, k2 := binary.Uvarint(b[k1:])
		b = b[k1+k2:]
		flags := b[0]
		n := int(flags & 0x7F)
		b = b[1:]
		us := make([]uint16, n)
		for i := range us {
			us[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		b = b[2*n:]
		start := next + rune(d)
		var e uint32
		if flags&0x80 != 0 {
			f := formula{n: uint8(n), delta: us[n-1] - uint16(start)}
			if n == 2 {
				f.first = us[0]
			}
			i, ok := fidx[f]
			if !ok {
				t.formulas = append(t.formulas, f)
				i = uint32(len(t.formulas))
				fidx[f] = i
			}
			e = i << 1
		} else {
			e = uint32(len(t.units))<<6 | uint32(n)<<1 | 1
			t.units = append(t.units, us...)
		}
		for r := start; r < start+rune(count); r++ {
			set(r, e)
		}
		next = start + rune(count)
	}
	flush()
	sp := t.appendRune(nil, ' ')
	if len(sp) != 2 {
		panic("collation: " + name + ": space does not weigh one unit")
	}
	t.space = binary.BigEndian.Uint16(sp)
	return t
}

// appendRune appends the units of r, two bytes each, big endian.
func (t *uniTable) appendRune(dst []byte, r rune) []byte {
	var e uint32
	if r >= 0 && r <= 0x10FFFF {
		if p := t.pages[r>>8]; p != nil {
			e = p[r&0xFF]
		}
	}
	switch {
	case e&1 != 0:
		off, n := e>>6, (e>>1)&31
		for _, u := range t.units[off : off+n] {
			dst = append(dst, byte(u>>8), byte(u))
		}
	case e != 0:
		f := &t.formulas[e>>1-1]
		if f.n == 2 {
			dst = append(dst, byte(f.first>>8), byte(f.first))
		}
		u := uint16(r) + f.delta
		dst = append(dst, byte(u>>8), byte(u))
	default:
		// No weight: the code point itself, behind a unit no table uses.
		dst = append(dst, 0xFF, 0xFF, byte(r>>24), byte(r>>16), byte(r>>8), byte(r))
	}
	return dst
}

// append appends the key of v, decoded as enc.
func (t *uniTable) append(dst, v []byte, enc encoding, prefix int, pad bool) []byte {
	start := len(dst)
	n := 0
	for len(v) > 0 && (prefix <= 0 || n < prefix) {
		r, size := enc.decode(v)
		v = v[size:]
		n++
		dst = t.appendRune(dst, r)
	}
	if pad {
		hi, lo := byte(t.space>>8), byte(t.space)
		for len(dst)-start >= 2 && dst[len(dst)-2] == hi && dst[len(dst)-1] == lo {
			dst = dst[:len(dst)-2]
		}
	}
	return dst
}
