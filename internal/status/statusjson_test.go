package status

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/paraply/paraply/internal/metrics"
	"github.com/paraply/paraply/internal/replicate"
)

// statusJSONDoc documents /status.json field by field.
const statusJSONDoc = "../../docs/status-json.md"

// filled sets every exported field reachable from v to a value that is
// not its zero, from n: every pointer set, every slice and map with one
// element, every time n seconds into 2026. Whatever a status may hold, it
// holds here, so that the JSON written from it has every field.
func filled(v reflect.Value, n int) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(time.Date(2026, 11, 24, 15, 0, n, 0, time.UTC)))
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				filled(v.Field(i), n)
			}
		}
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		filled(v.Elem(), n)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		filled(s.Index(0), n)
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			filled(v.Index(i), n)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		filled(k, n)
		filled(e, n)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.String:
		v.SetString(fmt.Sprintf("x%d", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) + 0.5)
	}
}

// fullStatus is a status with every field set, from n.
func fullStatus(n int) replicate.Status {
	var st replicate.Status
	filled(reflect.ValueOf(&st).Elem(), n)
	return st
}

// fullReport is the report of two samples of full statuses, with the
// charts' series: what /status.json?series=1 serves, every field there.
func fullReport(t *testing.T) Report {
	t.Helper()
	var v []Sample
	for _, n := range []int{1, 12} {
		ws := make([]metrics.WorkerStats, 2)
		for i := range ws {
			filled(reflect.ValueOf(&ws[i]).Elem(), n)
			ws[i].Worker = i
		}
		smp := takeSample(fullStatus(n), ws)
		smp.ID, smp.tick = int64(n), true
		v = append(v, smp)
	}
	r := build(v, DefaultWindow)
	r.Version, r.Series = "v0.0.0-test", series(v, DefaultWindow)
	if len(r.Diagnosis) == 0 || len(r.Series.Points) == 0 || len(r.Workers) == 0 || len(r.HotTables) == 0 {
		t.Fatalf("the report is not full: %+v", r)
	}
	return r
}

// TestStatusJSONRoundTrip: what /status.json writes of a status, `paraply
// status` reads back whole (it prints from it): no field is lost on the
// way, but the ones the wire leaves out on purpose.
func TestStatusJSONRoundTrip(t *testing.T) {
	st := fullStatus(7)
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back replicate.Status
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := st
	want.Checkpoint.Covered = nil           // GTIDs to compact at the next save: no status
	want.Dependencies.Tracker.Causes[0] = 0 // CauseNone counts nothing
	want.Dependencies.Filtered = want.Filters.Counts
	if !reflect.DeepEqual(back, want) {
		t.Errorf("read back:\n%+v\nwant:\n%+v\nJSON: %s", back, want, data)
	}
	// Just started: no time, error or position yet, and null says so.
	data, err = json.Marshal(replicate.Status{Now: time.Now(), Stream: "default", Source: "mysql://a@h:1", Target: "mysql://b@h:2",
		Flavor: "mariadb", Dependency: "writeset"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("0001-01-01")) || bytes.Contains(data, []byte(`""`)) {
		t.Errorf("an empty status has zero times or empty strings instead of null: %s", data)
	}
}

var (
	// docField is a field's row in docs/status-json.md: | `path` | ...
	docField = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")
	// placeholder is a path segment that stands for any key (a table's
	// name, a cause's): <name>, or <name>[] for an array in such a key.
	placeholder = regexp.MustCompile(`^<[a-z_]+>(\[\])?$`)
)

// TestStatusJSONDocumented: docs/status-json.md lists every field of
// /status.json (?series=1 included), and no other. A field added to the
// JSON, or one dropped from it, fails here until the document says so.
func TestStatusJSONDocumented(t *testing.T) {
	doc, err := os.ReadFile(statusJSONDoc)
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, m := range docField.FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	if len(documented) == 0 {
		t.Fatalf("%s lists no field (rows | `path` | ...)", statusJSONDoc)
	}
	data, err := json.Marshal(fullReport(t))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	served := jsonPaths("", v, nil)
	slices.Sort(served)
	served = slices.Compact(served)
	used := map[string]bool{}
	var undocumented []string
	for _, p := range served {
		i := slices.IndexFunc(documented, func(d string) bool { return pathMatches(d, p) })
		if i < 0 {
			undocumented = append(undocumented, p)
			continue
		}
		used[documented[i]] = true
	}
	if len(undocumented) > 0 {
		t.Errorf("/status.json has fields %s does not list:\n  %s", statusJSONDoc, strings.Join(undocumented, "\n  "))
	}
	var gone []string
	for _, d := range documented {
		if !used[d] {
			gone = append(gone, d)
		}
	}
	if len(gone) > 0 {
		t.Errorf("%s lists fields /status.json does not have:\n  %s", statusJSONDoc, strings.Join(gone, "\n  "))
	}
}

// jsonPaths appends the path of every member of v, an object or array
// decoded from JSON, under prefix: members joined by dots, an array's
// elements as [] (one path for all of them: sort and compact the result).
func jsonPaths(prefix string, v any, out []string) []string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			out = append(jsonPaths(p, x[k], out), p)
		}
	case []any:
		for _, e := range x {
			out = jsonPaths(prefix+"[]", e, out)
		}
	}
	return out
}

// pathMatches reports whether the documented path doc names the served
// path p: segment by segment, a placeholder matching any key.
func pathMatches(doc, p string) bool {
	ds, ps := strings.Split(doc, "."), strings.Split(p, ".")
	if len(ds) != len(ps) {
		return false
	}
	for i := range ds {
		if ds[i] == ps[i] {
			continue
		}
		m := placeholder.FindStringSubmatch(ds[i])
		if m == nil || strings.HasSuffix(ps[i], "[]") != (m[1] != "") {
			return false
		}
	}
	return true
}
