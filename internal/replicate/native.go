package replicate

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/paraply/paraply/internal/handover"
)

// nativeCheckEvery is how often a run checks that the target's own
// replication threads have not started beside it.
const nativeCheckEvery = 5 * time.Second

// watchNative stops the run, with handover.ErrNativeRunning, once the
// target's own replication threads run: a restart of the target with a
// replica configuration it still holds starts them again (unless
// skip-slave-start), and two appliers would apply the source's
// transactions twice. A check that fails (the target restarting) is tried
// again at the next tick; one that may not look (no SLAVE MONITOR) was
// reported at start.
func (r *Replica) watchNative(ctx context.Context, tgt *sql.DB) error {
	t := time.NewTicker(nativeCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		n, err := handover.ReadNative(ctx, tgt)
		if err != nil {
			continue
		}
		if n = r.nativeOfStream(n); len(n.Running) > 0 {
			return nativeRunning(n)
		}
	}
}

// nativeRunning is the error that stops paraply when the target's own
// replication runs, with the remedy.
func nativeRunning(n handover.Native) error {
	return fmt.Errorf("%w: replication connection %q on the target runs beside paraply, and two appliers apply the source's transactions twice. "+
		"Stop it and keep it stopped (STOP ALL SLAVES; RESET SLAVE ALL, or skip-slave-start in the target's configuration), then start paraply again",
		handover.ErrNativeRunning, n.Running[0])
}

// warnUnguarded says at start, loudly, what paraply cannot guard when the
// account may not read the target's replication status.
func (r *Replica) warnUnguarded(n handover.Native) {
	if n.Known {
		return
	}
	r.log.Warn("paraply cannot see whether the target's own replication threads run (SHOW ALL SLAVES STATUS needs the SLAVE MONITOR privilege): "+
		"if they start beside paraply (a target restart without skip-slave-start after a hand-over), both apply the source's transactions and the target diverges. "+
		"GRANT SLAVE MONITOR ON *.* to paraply's target account so that paraply stops when they do", "target", r.cfg.Target.String())
}

// nativeOfStream is what of the target's own replication concerns this
// run's stream: for a named stream, the connection of its name and its
// source's domains of gtid_slave_pos (see handover.Native.ForStream).
func (r *Replica) nativeOfStream(n handover.Native) handover.Native {
	domains := handover.Domains(r.info.Position)
	if domains == nil {
		domains = []uint32{} // a source with no GTID yet: none of gtid_slave_pos is its
	}
	return n.ForStream(r.cfg.Name, domains)
}
