package binlog

import (
	"errors"
	"io"
)

// FrameFile frames the binlog files at paths, in order, into raw
// transactions without decoding them. It holds them all in memory: it is
// for tests and small files, where the pipeline streams (source.Files).
func FrameFile(paths ...string) ([]*RawTxn, error) {
	fr := NewFileReader(paths...)
	defer fr.Close()
	f := NewFramer()
	var out []*RawTxn
	for {
		ev, err := fr.Next()
		if errors.Is(err, io.EOF) {
			return out, f.End()
		}
		if err != nil {
			return nil, err
		}
		if err := f.Push(ev); err != nil {
			return nil, err
		}
		for rt := f.Next(); rt != nil; rt = f.Next() {
			out = append(out, rt)
		}
	}
}
