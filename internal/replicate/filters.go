package replicate

import (
	"github.com/paraply/paraply/internal/filter"
)

// FilterStatus is what --include, --exclude and --rewrite-db do: the
// rules, and what they left out since the start.
type FilterStatus struct {
	Rules string
	filter.Counts
}

// newFilter returns the filter of the configured rules, nil without any,
// and logs them: an operator reading the log must see that some tables
// are not replicated.
func (r *Replica) newFilter() *filter.Filter {
	if r.cfg.Filter.Empty() {
		return nil
	}
	r.log.Info("filters: changes to tables and databases these rules leave out are not applied (their transactions are recorded as applied)",
		"rules", r.cfg.Filter.String())
	return filter.New(r.cfg.Filter)
}

// filterStatus fills st.Filters from the preparer's counts; call it with
// r.mu held.
func (r *Replica) filterStatus(st *Status) {
	if r.cfg.Filter.Empty() {
		return
	}
	st.Filters = &FilterStatus{Rules: r.cfg.Filter.String(), Counts: st.Dependencies.Filtered}
}
