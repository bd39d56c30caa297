package prepare

import (
	"github.com/paraply/paraply/internal/deptrack"
	"github.com/paraply/paraply/internal/stage"
)

// conflicts names the tables and writers of deps.Conflicts, from the
// writeset they index (nil when there are none, the common case).
func conflicts(deps deptrack.Deps, ws *deptrack.Writeset) []stage.Conflict {
	if len(deps.Conflicts) == 0 {
		return nil
	}
	out := make([]stage.Conflict, 0, len(deps.Conflicts))
	for i, k := range deps.Conflicts {
		if k >= len(ws.Refs) || i >= len(deps.Writers) {
			break
		}
		out = append(out, stage.Conflict{Table: ws.Refs[k].Table, Writer: deps.Writers[i]})
	}
	return out
}
