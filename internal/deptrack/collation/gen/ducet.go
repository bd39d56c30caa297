package main

import (
	"bufio"
	"log"
	"os"
	"strconv"
	"strings"
)

// ducet is an allkeys.txt file, reduced to primary weights.
type ducet struct {
	singles      map[rune][]uint16
	contractions []contraction
}

type contraction struct {
	seq       []rune
	primaries []uint16
}

// parseDUCET reads an allkeys.txt: "0041 ; [.1C47.0020.0008] # ..." lines,
// one or more code points, then collation elements whose first field is
// the primary weight ('*' marks variable elements, weighed as they are:
// MySQL's 0900 collations are non-ignorable).
func parseDUCET(path string) *ducet {
	f, err := os.Open(path)
	must(err)
	defer f.Close()
	d := &ducet{singles: map[rune][]uint16{}}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		lhs, rhs, ok := strings.Cut(line, ";")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "@") {
			continue
		}
		var seq []rune
		for _, h := range strings.Fields(lhs) {
			v, err := strconv.ParseUint(h, 16, 32)
			must(err)
			seq = append(seq, rune(v))
		}
		var prim []uint16
		for _, ce := range strings.Split(rhs, "[")[1:] {
			ce = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(ce), "]"))
			fields := strings.Split(ce[1:], ".")
			v, err := strconv.ParseUint(fields[0], 16, 16)
			if err != nil {
				log.Fatalf("%s: %q: %v", path, line, err)
			}
			if v != 0 {
				prim = append(prim, uint16(v))
			}
		}
		if len(seq) == 1 {
			d.singles[seq[0]] = prim
		} else if len(seq) > 1 {
			d.contractions = append(d.contractions, contraction{seq, prim})
		}
	}
	must(sc.Err())
	return d
}

// weights returns the primary weights of every character the file lists,
// plus the Hangul syllables, which UCA weighs as their conjoining jamo.
func (d *ducet) weights() map[rune][]uint16 {
	w := make(map[rune][]uint16, len(d.singles)+11172)
	for r, p := range d.singles {
		w[r] = p
	}
	for s := rune(0); s < 11172; s++ {
		l, v, t := 0x1100+s/588, 0x1161+(s%588)/28, 0x11A7+s%28
		var p []uint16
		p = append(p, d.singles[l]...)
		p = append(p, d.singles[v]...)
		if t != 0x11A7 {
			p = append(p, d.singles[t]...)
		}
		w[0xAC00+s] = p
	}
	return w
}

func (d *ducet) seqs() [][]rune {
	out := make([][]rune, len(d.contractions))
	for i, c := range d.contractions {
		out[i] = c.seq
	}
	return out
}
