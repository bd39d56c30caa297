package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/paraply/paraply/internal/config"
)

// The ops kit (issue 33), from this package's directory: the systemd unit,
// the example settings and passwords, the alert rules with their promtool
// tests and runbooks, the package script, the dashboard.
const (
	unitFile       = "../../packaging/systemd/paraply@.service"
	exampleConf    = "../../packaging/paraply.conf.example"
	exampleEnv     = "../../packaging/paraply.env.example"
	alertRules     = "../../packaging/prometheus/paraply-alerts.yml"
	alertTests     = "../../packaging/prometheus/paraply-alerts.test.yml"
	operationsFile = "../../docs/operations.md"
	mkdebScript    = "../../scripts/mkdeb.sh"
	makefile       = "../../Makefile"
	dashboardFile  = "../../dashboards/paraply.json"
)

// tool returns the path of the command name, failing the test (not
// skipping it: the check would pass unnoticed) with the Debian package
// that has it.
func tool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s is not installed: it is in Debian's %s package (make deps installs it)", name, pkg)
	}
	return path
}

// readText returns path's text, failing the test on an error.
func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// unitExposures are the checks of `systemd-analyze security` the unit
// fails on purpose: paraply talks to its servers over IP (or a Unix
// socket) to any address the settings give, and Go's runtime raises its
// own file limit (@resources).
var unitExposures = []string{
	"DeviceAllow=",
	"IPAddressDeny=",
	"PrivateNetwork=",
	"RestrictAddressFamilies=~AF_(INET|INET6)",
	"RestrictAddressFamilies=~AF_UNIX",
	"RootDirectory=/RootImage=",
	"SystemCallFilter=~@resources",
}

// TestSystemdUnit checks paraply@.service: the command, the passwords'
// file and the state directory are the ones docs/operations.md describes;
// `systemd-analyze verify` accepts it without a warning (verifyUnit); and
// `systemd-analyze security` finds no exposure beyond the ones the unit
// accepts on purpose (unitExposures), so a hardening option removed
// fails it.
func TestSystemdUnit(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	unit := readText(t, unitFile)
	for _, line := range []string{
		"ExecStart=/usr/bin/paraply replicate --config /etc/paraply/%i.conf --name %i",
		"EnvironmentFile=/etc/paraply/%i.env",
		"StateDirectory=paraply/%i",
		"WorkingDirectory=%S/paraply/%i",
		"KillSignal=SIGTERM",
		"Restart=on-failure",
		// Implied by others (NoNewPrivileges by DynamicUser), but stated
		// for the reader: the hardening issue 33 asks for.
		"DynamicUser=yes",
		"NoNewPrivileges=yes",
		"ProtectSystem=strict",
		"ProtectHome=yes",
		"PrivateTmp=yes",
		"RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
	} {
		if !slices.Contains(strings.Split(unit, "\n"), line) {
			t.Errorf("%s has no line %s", unitFile, line)
		}
	}
	copied := verifyUnit(t, analyze, unitFile, "paraply@.service", unit)
	out, err := exec.Command(analyze, "security", "--offline=yes", "--json=short", copied).Output()
	if err != nil {
		t.Fatalf("systemd-analyze security: %v\n%s", err, out)
	}
	var checks []struct {
		Set  bool   `json:"set"`
		Name string `json:"name"`
		Desc string `json:"description"`
	}
	if err := json.Unmarshal(out, &checks); err != nil {
		t.Fatalf("systemd-analyze security --json: %v\n%s", err, out)
	}
	if len(checks) < 50 {
		t.Fatalf("systemd-analyze security made %d checks, want the full list", len(checks))
	}
	var exposed []string
	for _, c := range checks {
		if !c.Set && !slices.Contains(unitExposures, c.Name) {
			exposed = append(exposed, c.Name+" ("+c.Desc+")")
		}
	}
	if len(exposed) > 0 {
		t.Errorf("systemd-analyze security: %s is exposed beyond unitExposures:\n%s", unitFile, strings.Join(exposed, "\n"))
	}
}

// verifyUnit writes unit, the text of the unit file from (a file of the
// repository, or the README), as dir/name, with this test binary for
// /usr/bin/paraply (systemd-analyze checks that ExecStart's binary exists),
// and runs `systemd-analyze verify` on it: it must pass without a warning
// (a misspelt option or a value systemd cannot parse is only a warning
// there). It returns the copy's path.
func verifyUnit(t *testing.T, analyze, from, name, unit string) string {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(t.TempDir(), name)
	writeFile(t, copied, strings.ReplaceAll(unit, "ExecStart=/usr/bin/paraply ", "ExecStart="+bin+" "), 0o644)
	out, err := exec.Command(analyze, "verify", copied).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify %s: %v, want no error and no warning\n%s", from, err, out)
	}
	return copied
}

// TestReadmeUnit checks the unit of the README's step 5 as it is printed
// there: `systemd-analyze verify` accepts it without a warning, and it
// agrees with the package's unit where a reader would copy it wrong: the
// binary at the package's path (/usr/bin/paraply), the user it runs as
// (which the step creates: step 3's password files are its) and the
// umask that keeps the relay log, which may hold passwords, private.
func TestReadmeUnit(t *testing.T) {
	analyze := tool(t, "systemd-analyze", "systemd")
	unit := runbookBlock(t, readmeFile, "unit")
	pkg := strings.Split(readText(t, unitFile), "\n")
	lines := strings.Split(unit, "\n")
	for _, want := range []string{"UMask=0077", "User=paraply"} {
		if !slices.Contains(pkg, want) {
			t.Errorf("%s has no line %s any more: the README's unit follows it", unitFile, want)
		}
		if !slices.Contains(lines, want) {
			t.Errorf("the README's unit has no line %s, as the package's has", want)
		}
	}
	for _, want := range []string{"ExecStart=/usr/bin/paraply replicate ", "StateDirectory=paraply", "WorkingDirectory="} {
		if !strings.Contains(unit, "\n"+want) {
			t.Errorf("the README's unit has no %s...", want)
		}
	}
	readme := readText(t, readmeFile)
	step5 := readme[strings.Index(readme, "### 5."):strings.Index(readme, "### 6.")]
	if !regexp.MustCompile(`(?m)useradd --system .* paraply$`).MatchString(step5) {
		t.Errorf("the README's step 5 does not create the system user paraply the unit runs as")
	}
	verifyUnit(t, analyze, readmeFile+" (<!-- runbook: unit -->)", "paraply.service", unit)
}

// commentedSetting is a setting the example leaves commented out.
var commentedSetting = regexp.MustCompile(`(?m)^# ?([a-z][a-z0-9-]*) = (.*)$`)

// TestExampleConfig checks the example settings a stream's NAME.conf
// starts from: replicate takes every line of it, the commented-out ones
// too (a misspelt setting is an error), and it gives a status address;
// and the example passwords file sets exactly the variables paraply reads
// passwords from.
func TestExampleConfig(t *testing.T) {
	text := readText(t, exampleConf)
	all := commentedSetting.ReplaceAllString(text, "$1 = $2")
	for name, conf := range map[string]string{"as shipped": text, "every setting uncommented": all} {
		cmd := replicateCmd()
		path := filepath.Join(t.TempDir(), "example.conf")
		writeFile(t, path, conf, 0o644)
		if err := config.ApplyFile(cmd.Flags(), path, nil); err != nil {
			t.Errorf("%s, %s: %v", exampleConf, name, err)
			continue
		}
		if f := cmd.Flags().Lookup("http"); !f.Changed || f.Value.String() == "" {
			t.Errorf("%s, %s: no http address (each stream on a host needs its own)", exampleConf, name)
		}
		if f := cmd.Flags().Lookup("name"); f != nil && f.Changed {
			t.Errorf("%s, %s: sets name, which the unit gives (--name %%i)", exampleConf, name)
		}
	}
	if n := len(commentedSetting.FindAllString(text, -1)); n < 5 {
		t.Errorf("%s: %d commented-out settings, the test expects the example's several", exampleConf, n)
	}

	// The variables the example sets, and the ones replicate's sources
	// (its flags and the pipeline's) read passwords from.
	var set []string
	for _, line := range strings.Split(readText(t, exampleEnv), "\n") {
		if name, _, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			set = append(set, name)
		}
	}
	sort.Strings(set)
	read := map[string]bool{}
	for _, f := range []string{"replicate.go", "pipeline.go"} {
		for _, m := range regexp.MustCompile(`"(PARAPLY_[A-Z_]*PASSWORD)"`).FindAllStringSubmatch(readText(t, f), -1) {
			read[m[1]] = true
		}
	}
	var want []string
	for name := range read {
		want = append(want, name)
	}
	sort.Strings(want)
	if len(want) == 0 || !slices.Equal(set, want) {
		t.Errorf("%s sets %v; paraply reads passwords from %v", exampleEnv, set, want)
	}
}

var (
	// ruleAlert is an alerting rule's name.
	ruleAlert = regexp.MustCompile(`(?m)^\s*- alert: (\w+)$`)
	// ruleRunbook is an alerting rule's runbook_url, to a section of
	// docs/operations.md.
	ruleRunbook = regexp.MustCompile(`(?m)^\s*runbook_url: "https://github\.com/paraply/paraply/blob/main/docs/operations\.md#([a-z0-9-]+)"$`)
	// mdHeading is a Markdown heading.
	mdHeading = regexp.MustCompile(`(?m)^#+ (.+)$`)
)

// TestAlertRules runs promtool on the alert rules: `check rules` (the
// syntax, the PromQL, the templates) and `test rules` on
// paraply-alerts.test.yml, where each alert fires on series that model a
// failing stream and stays silent on a healthy stream's and on near
// misses. It also checks that every alert has a summary and a
// description, a runbook_url to its own section of docs/operations.md,
// and a test in which it fires.
func TestAlertRules(t *testing.T) {
	promtool := tool(t, "promtool", "prometheus")
	for _, args := range [][]string{{"check", "rules", alertRules}, {"test", "rules", alertTests}} {
		if out, err := exec.Command(promtool, args...).CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	rules := readText(t, alertRules)
	alerts := ruleAlert.FindAllStringSubmatch(rules, -1)
	if len(alerts) == 0 {
		t.Fatalf("%s has no alert", alertRules)
	}
	anchors := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(readText(t, operationsFile), -1) {
		anchors[githubAnchor(m[1])] = true
	}
	tests := readText(t, alertTests)
	// Each rule's text runs from its "- alert:" line to the next one.
	starts := ruleAlert.FindAllStringIndex(rules, -1)
	for i, m := range alerts {
		name := m[1]
		end := len(rules)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		rule := rules[starts[i][0]:end]
		for _, a := range []string{"summary:", "description:"} {
			if !strings.Contains(rule, "\n          "+a+" ") {
				t.Errorf("alert %s has no %s annotation", name, strings.TrimSuffix(a, ":"))
			}
		}
		rb := ruleRunbook.FindStringSubmatch(rule)
		switch {
		case rb == nil:
			t.Errorf("alert %s has no runbook_url to docs/operations.md", name)
		case rb[1] != strings.ToLower(name):
			t.Errorf("alert %s's runbook_url goes to #%s, not its own section #%s", name, rb[1], strings.ToLower(name))
		case !anchors[rb[1]]:
			t.Errorf("alert %s's runbook_url goes to #%s, which is no heading of %s", name, rb[1], operationsFile)
		}
		fires := regexp.MustCompile(`alertname: ` + name + `\n\s+exp_alerts:\n\s+- exp_labels:`)
		if !fires.MatchString(tests) {
			t.Errorf("%s has no test in which %s fires", alertTests, name)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading: lower case, spaces
// as hyphens, punctuation dropped.
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestDebPackage builds the Debian package as `make release` does
// (scripts/mkdeb.sh), from a stand-in for the binary so that it takes
// a fraction of a second, and checks what dpkg-deb reads from it: the
// binary, the unit and the example settings, root's, at their paths; the
// settings as conffiles; the control fields, the version made a Debian
// one from git describe's (the string make release stamps into the
// binary); and what the maintainer scripts do (debPackageScripts).
func TestDebPackage(t *testing.T) {
	dpkgDeb := tool(t, "dpkg-deb", "dpkg")
	mk := readText(t, makefile)
	if !strings.Contains(mk, "scripts/mkdeb.sh $(DIST)/paraply-linux-$$arch $$arch $(DIST) $(VERSION)") {
		t.Errorf("%s: make release does not build its packages with scripts/mkdeb.sh and the version it stamps", makefile)
	}
	if !strings.Contains(mk, "-ldflags='-s -w $(STAMP)'") {
		t.Errorf("%s: make release does not stamp its binaries' version", makefile)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "paraply")
	writeFile(t, bin, "#!/bin/sh\necho stand-in\n", 0o755)
	for _, tc := range []struct{ describe, arch, version string }{
		{"v1.2.0-3-gabc1234-dirty", "arm64", "1.2.0+3+gabc1234+dirty"},
		{"75afd45", "amd64", "0.0.0+g75afd45"},
	} {
		out, err := exec.Command(mkdebScript, bin, tc.arch, filepath.Join(dir, "dist"), tc.describe).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", mkdebScript, err, out)
		}
		deb := strings.TrimSpace(string(out))
		if want := filepath.Join(dir, "dist", "paraply_"+tc.version+"_"+tc.arch+".deb"); deb != want {
			t.Errorf("%s built %q, want %s", mkdebScript, deb, want)
		}
		dpkg := func(args ...string) string {
			t.Helper()
			out, err := exec.Command(dpkgDeb, append(args, deb)...).CombinedOutput()
			if err != nil {
				t.Fatalf("dpkg-deb %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			return string(out)
		}
		contents := dpkg("--contents")
		for _, want := range []string{
			`-rwxr-xr-x root/root .* \./usr/bin/paraply`,
			`-rw-r--r-- root/root .* \./lib/systemd/system/paraply@\.service`,
			`-rw-r--r-- root/root .* \./etc/paraply/example\.conf`,
			`-rw------- root/root .* \./etc/paraply/example\.env`,
			`-rw-r--r-- root/root .* \./usr/share/paraply/paraply-alerts\.yml`,
		} {
			if !regexp.MustCompile(`(?m)^` + want + `$`).MatchString(contents) {
				t.Errorf("dpkg-deb --contents lists no %s:\n%s", want, contents)
			}
		}
		fields := dpkg("--field")
		for _, want := range []string{"Package: paraply", "Version: " + tc.version, "Architecture: " + tc.arch, "Maintainer: ", "Description: "} {
			if !strings.Contains(fields, "\n"+want) && !strings.HasPrefix(fields, want) {
				t.Errorf("the control file has no %q:\n%s", want, fields)
			}
		}
		out, err = exec.Command(dpkgDeb, "--info", deb, "conffiles").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "/etc/paraply/example.conf\n") {
			t.Errorf("/etc/paraply/example.conf is no conffile: %v %q", err, out)
		}
		// The files are the repository's.
		root := filepath.Join(dir, "root-"+tc.arch)
		if out, err := exec.Command(dpkgDeb, "--extract", deb, root).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb --extract: %v\n%s", err, out)
		}
		control := filepath.Join(dir, "control-"+tc.arch)
		if out, err := exec.Command(dpkgDeb, "--control", deb, control).CombinedOutput(); err != nil {
			t.Fatalf("dpkg-deb --control: %v\n%s", err, out)
		}
		debPackageScripts(t, control)
		for installed, source := range map[string]string{
			"usr/bin/paraply":                      bin,
			"lib/systemd/system/paraply@.service":  unitFile,
			"etc/paraply/example.conf":             exampleConf,
			"etc/paraply/example.env":              exampleEnv,
			"usr/share/paraply/paraply-alerts.yml": alertRules,
		} {
			if readText(t, filepath.Join(root, installed)) != readText(t, source) {
				t.Errorf("the package's /%s is not %s", installed, source)
			}
		}
	}
}

// debPackageScripts runs the package's maintainer scripts (read from the
// control directory dir) as dpkg calls them, on a machine running
// systemd (their /run/systemd/system test pointed at a directory that
// exists) with a systemctl that records its arguments: removing the
// package stops every running stream, an upgrade restarts them on the
// new binary, and every change reloads systemd's units; an upgrade does
// not stop them before, nor a first install start any.
func debPackageScripts(t *testing.T, dir string) {
	t.Helper()
	tmp := t.TempDir()
	systemd, bin, calls := filepath.Join(tmp, "systemd"), filepath.Join(tmp, "bin"), filepath.Join(tmp, "calls")
	if err := os.MkdirAll(systemd, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(bin, "systemctl"), "#!/bin/sh\necho \"$*\" >> "+calls+"\n", 0o755)
	const (
		reload  = "--system daemon-reload"
		stop    = "--system stop paraply@*.service"
		restart = "--system try-restart paraply@*.service"
	)
	for _, tc := range []struct {
		script string
		args   []string
		want   []string
	}{
		{"prerm", []string{"remove"}, []string{stop}},
		{"prerm", []string{"upgrade", "1.3.0"}, nil},
		{"postinst", []string{"configure", ""}, []string{reload}},
		{"postinst", []string{"configure", "1.1.0"}, []string{reload, restart}},
		{"postrm", []string{"remove"}, []string{reload}},
		{"postrm", []string{"upgrade", "1.3.0"}, []string{reload}},
	} {
		text := readText(t, filepath.Join(dir, tc.script))
		if !strings.Contains(text, "/run/systemd/system") {
			t.Errorf("%s does not check for a running systemd (/run/systemd/system)", tc.script)
		}
		path := filepath.Join(tmp, tc.script)
		writeFile(t, path, strings.ReplaceAll(text, "/run/systemd/system", systemd), 0o755)
		_ = os.Remove(calls)
		cmd := exec.Command(path, tc.args...)
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s %s: %v\n%s", tc.script, strings.Join(tc.args, " "), err, out)
			continue
		}
		var got []string
		if b, err := os.ReadFile(calls); err == nil {
			got = strings.Split(strings.TrimSpace(string(b)), "\n")
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %s ran systemctl %q, want %q", tc.script, strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

// TestDashboardStreamSelector checks that the Grafana dashboard tells
// streams apart: a stream variable with the streams' names, and every
// query's every paraply metric filtered by it. (TestDashboard* in
// internal/metrics check that the metrics exist.)
func TestDashboardStreamSelector(t *testing.T) {
	var d struct {
		Panels     []dashPanel `json:"panels"`
		Templating struct {
			List []struct {
				Name       string `json:"name"`
				Type       string `json:"type"`
				Definition string `json:"definition"`
				Multi      bool   `json:"multi"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal([]byte(readText(t, dashboardFile)), &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	found := false
	for _, v := range d.Templating.List {
		if v.Name == "stream" {
			found = v.Type == "query" && v.Multi && regexp.MustCompile(`^label_values\(paraply_\w+(\{[^}]*\})?, stream\)$`).MatchString(v.Definition)
			if !found {
				t.Errorf("the stream variable is %s %q, want a multi-value query of label_values(paraply_..., stream)", v.Type, v.Definition)
			}
		}
	}
	if !found {
		t.Error("the dashboard has no stream variable")
	}
	selector := regexp.MustCompile(`\bparaply_\w+(\{[^}]*\})?`)
	queries := 0
	var walk func([]dashPanel)
	walk = func(ps []dashPanel) {
		for _, p := range ps {
			for _, tg := range p.Targets {
				queries++
				for _, m := range selector.FindAllStringSubmatch(tg.Expr, -1) {
					if !strings.Contains(m[1], `stream=~"$stream"`) {
						t.Errorf("panel %q: %s is not filtered by stream=~\"$stream\"", p.Title, m[0])
					}
				}
			}
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	if queries == 0 {
		t.Errorf("%s has no query", dashboardFile)
	}
}

// dashPanel is the part of a Grafana panel TestDashboardStreamSelector
// reads.
type dashPanel struct {
	Title   string `json:"title"`
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
	Panels []dashPanel `json:"panels"`
}
