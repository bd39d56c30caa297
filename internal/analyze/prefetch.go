package analyze

import (
	"errors"
	"io"
	"sync"

	"github.com/paraply/paraply/internal/binlog"
)

// The prefetcher hands over raw transactions in chunks: enough to make
// the hand-over cheap, few enough and small enough to bound what waits in
// memory (a piece of a large transaction is up to LargeTransactionBytes).
const (
	chunkTxns   = 64
	chunkBytes  = 1 << 20
	chunksAhead = 4
)

// prefetcher reads the files' events and frames them into raw
// transactions in a goroutine of its own, a few chunks ahead of the
// goroutine that decodes them (binlog.NewRawReader over next): reading,
// checking checksums and framing run beside decoding, on another core.
// Close stops the goroutine; call it before the files are closed.
type prefetcher struct {
	chunks chan rawChunk
	done   chan struct{}
	wg     sync.WaitGroup
	cur    rawChunk
	i      int
	// read is how many bytes of the files had been read when the last
	// transaction handed out (or the end) was: the report's Bytes.
	read int64
}

// rawChunk is transactions in stream order, each with the files' bytes
// read up to its end; err, if set, is what came after them (io.EOF at
// the end), with the bytes read by then.
type rawChunk struct {
	txns  []*binlog.RawTxn
	read  []int64
	err   error
	endAt int64
}

func newPrefetcher(files *binlog.FileReader, partBytes int) *prefetcher {
	p := &prefetcher{chunks: make(chan rawChunk, chunksAhead), done: make(chan struct{})}
	f := binlog.NewFramer()
	f.PartBytes = partBytes
	p.wg.Add(1)
	go p.run(files, f)
	return p
}

func (p *prefetcher) run(files *binlog.FileReader, f *binlog.Framer) {
	defer p.wg.Done()
	var c rawChunk
	size := 0
	for {
		for rt := f.Next(); rt != nil; rt = f.Next() {
			c.txns = append(c.txns, rt)
			c.read = append(c.read, files.BytesRead())
			if size += rt.Bytes(); len(c.txns) == chunkTxns || size >= chunkBytes {
				if !p.send(c) {
					return
				}
				c, size = rawChunk{}, 0
			}
		}
		ev, err := files.Next()
		switch {
		case errors.Is(err, io.EOF):
			if err = f.End(); err == nil {
				if rt := f.Next(); rt != nil { // a transaction that waited for a possible XID
					c.txns = append(c.txns, rt)
					c.read = append(c.read, files.BytesRead())
				}
				err = io.EOF
			}
		case err == nil:
			err = f.Push(ev)
			if err == nil {
				continue
			}
		}
		c.err, c.endAt = err, files.BytesRead()
		p.send(c)
		return
	}
}

// send hands c over; false once Close was called.
func (p *prefetcher) send(c rawChunk) bool {
	select {
	case p.chunks <- c:
		return true
	case <-p.done:
		return false
	}
}

// next returns the next raw transaction, or the error that ended the
// files (io.EOF at their end).
func (p *prefetcher) next() (*binlog.RawTxn, error) {
	for p.i == len(p.cur.txns) {
		if p.cur.err != nil {
			p.read = p.cur.endAt
			return nil, p.cur.err
		}
		p.cur, p.i = <-p.chunks, 0
	}
	rt := p.cur.txns[p.i]
	p.read = p.cur.read[p.i]
	p.cur.txns[p.i] = nil // the decoder's now
	p.i++
	return rt, nil
}

// Close stops the reading goroutine and waits for it.
func (p *prefetcher) Close() {
	close(p.done)
	p.wg.Wait()
}
