// Command gen writes the weight tables of package collation (data/*.bin).
//
// The tables of MariaDB's collations come from MariaDB itself: a sandboxed
// MariaDB (Debian's package) is asked WEIGHT_STRING of every character of
// every collation it weighs, so the tables say what the server does, not
// what a reading of its source suggests. MySQL 8's utf8mb4_0900_ai_ci, which
// MariaDB lacks, comes from the Unicode Collation Algorithm's DUCET 9.0.0
// (allkeys-9.0.0.txt, the table MySQL 8 compiled its 0900 collations from).
//
// Contractions (two or more characters weighed as one, such as Thai
// prevowel reordering, Cyrillic И + combining breve = Й, Catalan l·) are
// the one place where a per-character table can disagree with a server,
// and whether a server applies DUCET's contractions is not taken on faith:
// the weights are coarsened (see coarsen) until a string gets the same key
// whether or not its contractions are applied.
//
// Run it from the repository root with DUCET files, e.g. those in Python's
// pyuca wheel (allkeys-5.2.0 ... allkeys-10.0.0) and Perl's
// Unicode::Collate (allkeys 13.0.0):
//
//	go run ./internal/deptrack/collation/gen \
//	    -ducet900 /path/allkeys-9.0.0.txt \
//	    -contractions /path/allkeys-5.2.0.txt,/path/allkeys-10.0.0.txt,...
package main

import (
	"bytes"
	"compress/flate"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/paraply/paraply/internal/sandbox"
)

func main() {
	ducet900 := flag.String("ducet900", "", "allkeys-9.0.0.txt")
	contr := flag.String("contractions", "", "comma-separated allkeys files whose contractions are checked")
	out := flag.String("out", "internal/deptrack/collation/data", "output directory")
	flag.Parse()
	if *ducet900 == "" {
		log.Fatal("-ducet900 is required")
	}
	ctx := context.Background()
	srv, err := sandbox.Start(ctx, sandbox.Options{Name: "collgen"})
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Remove()
	db, err := srv.DB("")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // USE must stick
	must(exec(db, "CREATE DATABASE IF NOT EXISTS gen"))
	must(exec(db, "USE gen"))

	var seqs [][]rune
	files := []string{*ducet900}
	if *contr != "" {
		files = append(files, strings.Split(*contr, ",")...)
	}
	seen := map[string]bool{}
	for _, f := range files {
		d := parseDUCET(f)
		for _, c := range d.contractions {
			if k := string(c.seq); !seen[k] {
				seen[k] = true
				seqs = append(seqs, c.seq)
			}
		}
	}
	log.Printf("%d distinct contractions", len(seqs))

	eight := eightBit(db)
	must(os.WriteFile(filepath.Join(*out, "eightbit.bin"), deflate(eight), 0o644))

	for _, name := range []string{"utf8mb4_general_ci", "utf8mb4_unicode_ci", "utf8mb4_unicode_520_ci", "utf8mb4_uca1400_ai_ci"} {
		w := serverWeights(db, name)
		cw := map[string][]uint16{}
		for _, s := range seqs {
			cw[string(s)] = weigh(db, name, string(s))
		}
		tbl := coarsen(name, w, seqs, cw)
		must(os.WriteFile(filepath.Join(*out, name+".bin"), deflate(encode(tbl)), 0o644))
	}
	d := parseDUCET(*ducet900)
	w := d.weights()
	// Characters DUCET does not list get implicit weights, computed as UCA
	// 9.0.0 does (DUCET's own compatibility ideographs point at them).
	for r := rune(0); r <= 0x10FFFF; r++ {
		if _, ok := w[r]; !ok && (r < 0xD800 || r > 0xDFFF) {
			w[r] = implicit900(r)
		}
	}
	cw := map[string][]uint16{}
	for _, c := range d.contractions {
		cw[string(c.seq)] = c.primaries
	}
	tbl := coarsen("utf8mb4_0900_ai_ci", w, d.seqs(), cw)
	must(os.WriteFile(filepath.Join(*out, "utf8mb4_0900_ai_ci.bin"), deflate(encode(tbl)), 0o644))
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func exec(db *sql.DB, q string, args ...any) error {
	_, err := db.Exec(q, args...)
	return err
}

func deflate(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// eightBit asks the server the weight of every byte in every collation of a
// single-byte character set, keeps those whose weights are context-free
// (the weight of a string is the concatenation of its bytes' weights,
// checked on random strings), and encodes them: name, then per byte a
// count and that many weight bytes.
func eightBit(db *sql.DB) []byte {
	rows, err := db.Query(`SELECT c.COLLATION_NAME, c.CHARACTER_SET_NAME FROM information_schema.COLLATIONS c
		JOIN information_schema.CHARACTER_SETS s USING (CHARACTER_SET_NAME)
		WHERE s.MAXLEN = 1 AND c.CHARACTER_SET_NAME <> 'binary' ORDER BY 1`)
	must(err)
	var names, sets []string
	for rows.Next() {
		var n, s string
		must(rows.Scan(&n, &s))
		names, sets = append(names, n), append(sets, s)
	}
	must(rows.Err())
	rows.Close()
	var out []byte
	rng := rand.New(rand.NewPCG(1, 2))
	for i, name := range names {
		var table [256][]byte
		q := fmt.Sprintf("SELECT seq, HEX(WEIGHT_STRING(CONVERT(UNHEX(LPAD(HEX(seq), 2, '0')) USING %s) COLLATE %s)) FROM seq_0_to_255", sets[i], name)
		rs, err := db.Query(q)
		must(err)
		for rs.Next() {
			var b int
			var h string
			must(rs.Scan(&b, &h))
			table[b], _ = hex.DecodeString(h)
		}
		must(rs.Err())
		rs.Close()
		ok := true
		for range 400 {
			s := make([]byte, 1+rng.IntN(6))
			for j := range s {
				s[j] = byte(rng.IntN(256))
			}
			var want []byte
			for _, b := range s {
				want = append(want, table[b]...)
			}
			var h string
			q := fmt.Sprintf("SELECT HEX(WEIGHT_STRING(CONVERT(UNHEX(?) USING %s) COLLATE %s))", sets[i], name)
			must(db.QueryRow(q, hex.EncodeToString(s)).Scan(&h))
			got, _ := hex.DecodeString(h)
			if !bytes.Equal(got, want) {
				log.Printf("%s: not context-free (%x: server %x, bytes %x); left out", name, s, got, want)
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		out = binary.AppendUvarint(out, uint64(len(name)))
		out = append(out, name...)
		for _, w := range table {
			out = append(out, byte(len(w)))
			out = append(out, w...)
		}
	}
	return out
}

// serverWeights returns the server's weights of every code point (but the
// surrogates) in a utf8mb4 collation, as 16-bit units.
func serverWeights(db *sql.DB, name string) map[rune][]uint16 {
	q := fmt.Sprintf(`SELECT seq, HEX(WEIGHT_STRING(CONVERT(CHAR(seq USING utf32) USING utf8mb4) COLLATE %s))
		FROM seq_0_to_1114111 WHERE seq NOT BETWEEN 55296 AND 57343`, name)
	rows, err := db.Query(q)
	must(err)
	defer rows.Close()
	w := map[rune][]uint16{}
	for rows.Next() {
		var cp int
		var h sql.NullString
		must(rows.Scan(&cp, &h))
		if !h.Valid {
			log.Fatalf("%s: no weight for U+%04X", name, cp)
		}
		w[rune(cp)] = units(h.String)
	}
	must(rows.Err())
	log.Printf("%s: %d code points", name, len(w))
	return w
}

func weigh(db *sql.DB, name, s string) []uint16 {
	var h string
	must(db.QueryRow(fmt.Sprintf("SELECT HEX(WEIGHT_STRING(CONVERT(? USING utf8mb4) COLLATE %s))", name), s).Scan(&h))
	return units(h)
}

func units(h string) []uint16 {
	b, err := hex.DecodeString(h)
	must(err)
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.BigEndian.Uint16(b[2*i:])
	}
	return u
}

// table is a collation's final per-character keys, for every code point
// but the surrogates.
type table map[rune][]uint16

// coarsen turns per-character weights into keys that two strings share
// whenever the server calls them equal, whether or not it applies the
// contractions seqs (whose own weights are cw):
//
//   - a contraction that reorders (Thai and Lao prevowels: the pair weighs
//     as its second character then its first) drops the first
//     character's weights from every key;
//   - any other contraction drops the weights of its later characters (a
//     combining mark, a middle dot, a vowel sign), and if the contraction
//     and its first character then weigh one unit each, those two units
//     are merged into one class.
//
// It repeats until every contraction weighs the same as its characters,
// and fails if that cannot be reached. Characters with implicit weights
// that no step touched are left out of the table (their code point is
// their key).
func coarsen(name string, w map[rune][]uint16, seqs [][]rune, cw map[string][]uint16) table {
	k := &coarsener{name: name, w: w, parent: map[uint16]uint16{}, dropped: map[uint16]bool{}}
	for pass := 0; ; pass++ {
		if !k.pass(seqs, cw) {
			break
		}
		if pass > 20 {
			log.Fatalf("%s: contractions do not settle", name)
		}
	}
	tbl := table{}
	for r, ws := range w {
		tbl[r] = k.phi(ws)
		if len(tbl[r]) > 31 {
			log.Fatalf("%s: U+%04X has %d units", name, r, len(tbl[r]))
		}
	}
	return tbl
}

// coarsener is coarsen at work on the collation name: the characters'
// weights w, the classes merged so far (parent, a union-find over weight
// units) and the units dropped from keys.
type coarsener struct {
	name    string
	w       map[rune][]uint16
	parent  map[uint16]uint16
	dropped map[uint16]bool
}

// find is the class of unit u, the smallest unit merged with it.
func (k *coarsener) find(u uint16) uint16 {
	p, ok := k.parent[u]
	if !ok || p == u {
		return u
	}
	r := k.find(p)
	k.parent[u] = r
	return r
}

// phi is the key of weights ws as far as coarsened: without ignorable and
// dropped units, each unit replaced by its class.
func (k *coarsener) phi(ws []uint16) []uint16 {
	var out []uint16
	for _, u := range ws {
		if u == 0 || k.dropped[u] {
			continue
		}
		out = append(out, k.find(u))
	}
	return out
}

// concat is the weights of the characters of s one after the other.
func (k *coarsener) concat(s []rune) []uint16 {
	var out []uint16
	for _, r := range s {
		out = append(out, weightOf(k.w, r)...)
	}
	return out
}

// drop drops r's weight units from every key.
func (k *coarsener) drop(r rune) {
	for _, u := range weightOf(k.w, r) {
		if u != 0 && !k.dropped[u] {
			k.dropped[u] = true
			log.Printf("%s: U+%04X: weight %04X dropped from keys", k.name, r, u)
		}
	}
}

// pass takes one step for each contraction of seqs (cw holds their
// weights) that does not yet weigh as its characters do, and reports
// whether it took any.
func (k *coarsener) pass(seqs [][]rune, cw map[string][]uint16) bool {
	changed := false
	for _, s := range seqs {
		c, ok := cw[string(s)]
		if !ok {
			continue
		}
		if k.step(s, c) {
			changed = true
		}
	}
	return changed
}

// step makes contraction s, of weights c, weigh more nearly as its
// characters do, by the steps coarsen lists; false if it already does.
func (k *coarsener) step(s []rune, c []uint16) bool {
	a, b := k.phi(k.concat(s)), k.phi(c)
	if slices.Equal(a, b) {
		return false
	}
	if len(s) == 2 && slices.Equal(k.phi(k.concat([]rune{s[1], s[0]})), b) {
		k.drop(s[0])
		return true
	}
	for _, r := range s[1:] {
		k.drop(r)
	}
	a, b = k.phi(k.concat(s)), k.phi(c)
	if len(a) == 1 && len(b) == 1 && a[0] != b[0] {
		lo, hi := min(a[0], b[0]), max(a[0], b[0])
		k.parent[hi] = lo
		log.Printf("%s: %q: classes %04X and %04X merged", k.name, string(s), lo, hi)
	} else if !slices.Equal(a, b) {
		for _, r := range s {
			k.drop(r)
		}
		for _, u := range c {
			if u != 0 {
				k.dropped[u] = true
			}
		}
	}
	return true
}

// implicit900 is UCA 9.0.0's implicit weight of a character DUCET does not
// list (UTS #10 section 10.1.3): Tangut has its own base; unified
// ideographs of the core block and of the extensions have two more.
func implicit900(r rune) []uint16 {
	in := func(lo, hi rune) bool { return r >= lo && r <= hi }
	var base uint16
	switch {
	case in(0x17000, 0x18AFF):
		return []uint16{0xFB00, uint16(r-0x17000) | 0x8000}
	case in(0x4E00, 0x9FD5), in(0xFA0E, 0xFA0F), r == 0xFA11, in(0xFA13, 0xFA14), r == 0xFA1F,
		r == 0xFA21, in(0xFA23, 0xFA24), in(0xFA27, 0xFA29):
		base = 0xFB40
	case in(0x3400, 0x4DB5), in(0x20000, 0x2A6D6), in(0x2A700, 0x2B734), in(0x2B740, 0x2B81D), in(0x2B820, 0x2CEA1):
		base = 0xFB80
	default:
		base = 0xFBC0
	}
	return []uint16{base + uint16(r>>15), uint16(r&0x7FFF) | 0x8000}
}

// weightOf is r's weight in w.
func weightOf(w map[rune][]uint16, r rune) []uint16 {
	ws, ok := w[r]
	if !ok {
		log.Fatalf("no weight for U+%04X", r)
	}
	return ws
}

// encode writes a table as records of runs: uvarint code point delta from
// the end of the previous run, uvarint run length, a byte n|0x80 if the
// last unit of the run grows by one per code point (else n, the unit
// count), then the n units of the run's first code point (uint16, little
// endian).
func encode(t table) []byte {
	cps := make([]rune, 0, len(t))
	for r := range t {
		cps = append(cps, r)
	}
	slices.Sort(cps)
	var out []byte
	next := rune(0)
	for i := 0; i < len(cps); {
		r := cps[i]
		ws := t[r]
		j := i + 1
		inc := false
		for j < len(cps) && cps[j] == cps[j-1]+1 {
			wj := t[cps[j]]
			if slices.Equal(wj, ws) && !inc {
				j++
				continue
			}
			if (j == i+1 || inc) && grows(ws, wj, int(cps[j]-r)) {
				inc = true
				j++
				continue
			}
			break
		}
		out = binary.AppendUvarint(out, uint64(r-next))
		out = binary.AppendUvarint(out, uint64(j-i))
		n := byte(len(ws))
		if inc {
			n |= 0x80
		}
		out = append(out, n)
		for _, u := range ws {
			out = binary.LittleEndian.AppendUint16(out, u)
		}
		next = cps[j-1] + 1
		i = j
	}
	return out
}

// grows reports whether b is a with its last unit d higher (and at most two
// units: the runtime keeps such runs as a formula).
func grows(a, b []uint16, d int) bool {
	n := len(a)
	if n == 0 || n > 2 || len(b) != n || (n == 2 && a[0] != b[0]) {
		return false
	}
	return int(b[n-1]) == int(a[n-1])+d
}
