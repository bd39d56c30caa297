package clone

import (
	"errors"
	"io"
	"log/slog"
	"time"

	"github.com/paraply/paraply/internal/checkpoint"
	"github.com/paraply/paraply/internal/replicate"
)

// Config is what `paraply clone` needs: the stream's settings, as
// replicate takes them (the servers, the stream's name, its filters and
// rewrite, its relay log), and how the copy runs.
type Config struct {
	// Stream is the stream the clone seeds; replicate runs it afterwards
	// (and, on a resumed clone, brings the tables copied whole forward
	// with it). Its Filter decides what is copied, under which names.
	Stream replicate.Config
	// Workers are the target sessions inserting chunks at once.
	Workers int
	// Readers are the source sessions reading chunks, each in its own
	// snapshot: one reads without any lock (MariaDB names the binlog
	// position of its snapshot); more are opened while the source's
	// commits are blocked for a moment (BACKUP STAGE BLOCK_COMMIT), so
	// that their snapshots are at one position.
	Readers int
	// ChunkRows and ChunkBytes bound a chunk: the rows one target
	// transaction copies, with its progress row.
	ChunkRows  int
	ChunkBytes int
	// Rate, if not 0, bounds the rows read per second (all readers
	// together), to spare a busy source, as a throttle does.
	Rate int
	// Overwrite drops the target's tables that the clone would copy,
	// rather than refuse to start (a first run only).
	Overwrite bool
	// DeferIndexes creates a table without its secondary indexes and adds
	// them once its rows are in (an index built from sorted rows is
	// faster than one kept up row by row).
	DeferIndexes bool
	// Progress, if set, receives the progress display every
	// ProgressEvery; Terminal says it is a terminal, redrawn in place.
	Progress      io.Writer
	ProgressEvery time.Duration
	Terminal      bool
}

// Default returns the defaults: 4 workers, one lock-free reader, chunks
// of up to 10,000 rows or 8 MiB, secondary indexes deferred.
func Default() Config {
	return Config{
		Stream:        replicate.Default(),
		Workers:       4,
		Readers:       1,
		ChunkRows:     10000,
		ChunkBytes:    8 << 20,
		DeferIndexes:  true,
		ProgressEvery: 10 * time.Second,
	}
}

// Validate reports the first problem with c.
func (c Config) Validate() error {
	switch {
	case c.Workers < 1 || c.Workers > 256:
		return errors.New("--copy-workers must be between 1 and 256")
	case c.Readers < 1 || c.Readers > c.Workers:
		return errors.New("--copy-readers must be between 1 and --copy-workers")
	case c.ChunkRows < 1:
		return errors.New("--chunk-rows must be at least 1")
	case c.ChunkBytes < 64<<10:
		return errors.New("--chunk-bytes must be at least 64KiB")
	case c.Rate < 0:
		return errors.New("--copy-rate must not be negative")
	}
	return c.Stream.Validate()
}

// budget is how many bytes of rows read and not yet written the clone
// holds at most: two chunks per worker, so that each has the next one
// ready while it writes one. A row larger than a chunk is held alone.
func (c Config) budget() int64 { return 2 * int64(c.Workers) * int64(c.ChunkBytes) }

// logger is the stream's logger.
func (c Config) logger() *slog.Logger {
	l := c.Stream.Logger
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	if c.Stream.Name != "" && c.Stream.Name != checkpoint.DefaultStream {
		l = l.With("stream", c.Stream.Name)
	}
	return l.With("component", "clone")
}
