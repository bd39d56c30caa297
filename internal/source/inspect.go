package source

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/paraply/paraply/internal/binlog"
)

// Info is what a source says about itself.
type Info struct {
	Flavor  binlog.Flavor
	Version string
	// Position is the source's current GTID position: where a replica
	// that has everything up to now would resume.
	Position     string
	ServerID     uint32
	BinlogFormat string
	RowImage     string
	RowMetadata  string
}

// Inspect reads the source's flavor, position and binlog settings, and
// refuses a source paraply cannot replicate from (no binary log, no
// GTIDs).
func Inspect(ctx context.Context, db *sql.DB) (Info, error) {
	var in Info
	var logBin int
	if err := db.QueryRowContext(ctx, "SELECT VERSION(), @@server_id, @@log_bin, @@binlog_format, @@binlog_row_image").
		Scan(&in.Version, &in.ServerID, &logBin, &in.BinlogFormat, &in.RowImage); err != nil {
		return in, fmt.Errorf("inspecting the source: %w", err)
	}
	if logBin != 1 {
		return in, fmt.Errorf("the source has no binary log (start it with log_bin)")
	}
	in.Flavor = binlog.FlavorMySQL
	if strings.Contains(strings.ToLower(in.Version), "mariadb") {
		in.Flavor = binlog.FlavorMariaDB
	}
	var err error
	if in.Position, err = ReadPosition(ctx, db, in.Flavor); err != nil {
		return in, err
	}
	_ = db.QueryRowContext(ctx, "SELECT @@binlog_row_metadata").Scan(&in.RowMetadata)
	// MIXED and STATEMENT are replicated too: their statements run as a
	// replica runs them, in the order of the source's group commits.
	return in, nil
}

// ReadPosition reads a source's current GTID position: gtid_binlog_pos on
// MariaDB, gtid_executed on MySQL (without its line breaks).
func ReadPosition(ctx context.Context, db *sql.DB, f binlog.Flavor) (string, error) {
	q := "SELECT @@global.gtid_executed"
	if f == binlog.FlavorMariaDB {
		q = "SELECT @@global.gtid_binlog_pos"
	}
	var pos string
	if err := db.QueryRowContext(ctx, q).Scan(&pos); err != nil {
		return "", fmt.Errorf("reading the source's GTID position (GTIDs must be on): %w", err)
	}
	return strings.ReplaceAll(pos, "\n", ""), nil
}
