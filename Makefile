# paraply: two commands for a newcomer.
#   make demo   install what is missing, build, run paraply on sandboxed MariaDB servers
#   make test   run every test (real MariaDB servers, started and stopped by the tests)

GO ?= go
BIN := bin/paraply

# The version every build says (paraply version) and make release names its
# packages from: git describe's, with the commit and its time (UTC), stamped
# with -ldflags -X so that a build without Go's VCS stamping
# (GOFLAGS=-buildvcs=false) says it too. scripts/mkdeb.sh makes the Debian
# version from the same string; internal/buildinfo says how.
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null)
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
COMMIT_TIME := $(shell TZ=UTC0 git log -1 --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd 2>/dev/null)
STAMP_PKG := github.com/paraply/paraply/internal/buildinfo
STAMP := -X $(STAMP_PKG).version=$(VERSION) -X $(STAMP_PKG).revision=$(REVISION) -X $(STAMP_PKG).commitTime=$(COMMIT_TIME)

.PHONY: all build demo test deps vet fmt clean soak lint release

all: build

deps:
	@scripts/install-deps.sh

build:
	$(GO) build -ldflags '$(STAMP)' -o $(BIN) ./cmd/paraply

demo: deps build
	$(BIN) demo

# make test runs the packages in two groups, one package at a time in each
# (-p 1: the machines this runs on have two cores, and many packages start
# servers):
#   - NORACE_PKGS drive paraply itself, or the whole of a status page or
#     verify run, against real MariaDB servers for minutes. They run without
#     the race detector, which slows the Go side several times over (the
#     paraply processes the cmd/paraply tests start are the test binary).
#   - every other package runs with -race: the pure logic, and the packages
#     whose tests start a server or two (internal/replicate runs the
#     pipeline's goroutines in the test process, where races would be).
# -race needs cgo (a C compiler); without it both groups run without.
# The test binaries are compiled first with every core (-run '^$' runs no
# test), so that -p 1 does not compile one package at a time as well; a
# build failure is reported by the runs that follow.
# Two streams run side by side, because one test at a time keeps about one
# of the two cores busy (servers starting, fsyncs, round trips): LONG_PKGS
# (cmd/paraply and the status page's timed scenarios, about 9.5 minutes)
# in one, the -race group and the rest of NORACE_PKGS (about 7.5) in the
# other, whose output is printed when both are done. Together they take
# about 10.5 minutes (make test on this machine) where one after the
# other took 16.
NORACE_PKGS := cmd/paraply internal/status internal/verify internal/bench
LONG_PKGS := cmd/paraply internal/status
SIDE_PKGS := $(filter-out $(LONG_PKGS),$(NORACE_PKGS))
MODULE := github.com/paraply/paraply
RACE_PKGS = $(filter-out $(addprefix $(MODULE)/,$(NORACE_PKGS)),$(shell $(GO) list ./...))
RACE = $(if $(filter 1,$(shell $(GO) env CGO_ENABLED)),-race)

test: deps
	$(GO) vet ./...
	@[ -n "$(RACE)" ] || echo "make test: cgo is off (no C compiler?), so no -race" >&2
	@echo "$(GO) test [compile only] ./..."; \
	$(GO) test $(RACE) -count=1 -run '^$$' $(RACE_PKGS) >/dev/null 2>&1; \
	$(GO) test -count=1 -run '^$$' $(addprefix ./,$(NORACE_PKGS)) >/dev/null 2>&1; \
	status=0; side=$$(mktemp); \
	echo "$(GO) test $(RACE) -p 1 -count=1 -timeout 20m [every package but $(NORACE_PKGS)], then $(GO) test -p 1 -count=1 -timeout 20m $(addprefix ./,$(SIDE_PKGS)) (beside the next; output after it)"; \
	{ rc=0; \
	  $(GO) test $(RACE) -p 1 -count=1 -timeout 20m $(RACE_PKGS) || rc=1; \
	  $(GO) test -p 1 -count=1 -timeout 20m $(addprefix ./,$(SIDE_PKGS)) || rc=1; \
	  echo $$rc >$$side.rc; } >$$side 2>&1 & \
	echo "$(GO) test -p 1 -count=1 -timeout 20m $(addprefix ./,$(LONG_PKGS))"; \
	$(GO) test -p 1 -count=1 -timeout 20m $(addprefix ./,$(LONG_PKGS)) || status=1; \
	wait; cat $$side; [ "$$(cat $$side.rc 2>/dev/null)" = 0 ] || status=1; rm -f $$side $$side.rc; \
	exit $$status

vet:
	$(GO) vet ./...

# make lint   golangci-lint with .golangci.yml. The version is pinned and
#             installed into bin/ through the Go module proxy the first time
#             (about a minute); make test does not need it.
GOLANGCI_LINT_VERSION := v2.15.0
lint:
	@bin/golangci-lint version 2>/dev/null | grep -q "version $(GOLANGCI_LINT_VERSION:v%=%) " || \
		GOBIN=$(CURDIR)/bin $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	bin/golangci-lint run ./...

fmt:
	gofmt -l -w cmd internal

clean:
	rm -rf bin dist

# make release   what a release ships, in dist/: static linux binaries for
#                amd64 and arm64 (no cgo, -trimpath, the version stamped
#                as make build stamps it), a Debian package of each
#                (scripts/mkdeb.sh: the binary, the systemd unit
#                paraply@.service, an example config) and SHA256SUMS of them
#                all. The version is VERSION, the one `paraply version`
#                prints; the package's is made from it.
DIST := dist
RELEASE_ARCHS := amd64 arm64
release:
	rm -rf $(DIST)
	mkdir -p $(DIST)
	set -e; for arch in $(RELEASE_ARCHS); do \
		echo "building $(DIST)/paraply-linux-$$arch"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=$$arch $(GO) build -trimpath -buildvcs=true -ldflags='-s -w $(STAMP)' \
			-o $(DIST)/paraply-linux-$$arch ./cmd/paraply; \
		scripts/mkdeb.sh $(DIST)/paraply-linux-$$arch $$arch $(DIST) $(VERSION); \
	done
	cd $(DIST) && sha256sum paraply-linux-* *.deb > SHA256SUMS
	cat $(DIST)/SHA256SUMS

# make bench        paraply against MariaDB's own replica (single thread, and
#                   4/16 threads in each parallel mode) on the same backlogs,
#                   with the target's own throughput as the ceiling; about
#                   3 hours on a two-core machine. Results in
#                   bench/results/DATE/ (results.md, results.json, charts).
# make bench-quick  the same method on small backlogs: about 3 minutes.
# BENCH_FLAGS adds flags, e.g. BENCH_FLAGS="-workloads write_only -durability durable"
# (bin/bench-replication -help lists them).
.PHONY: bench bench-quick
bench: deps build
	$(GO) build -o bin/bench-replication ./bench/replication
	bin/bench-replication -paraply $(BIN) $(BENCH_FLAGS)

bench-quick: deps build
	$(GO) build -o bin/bench-replication ./bench/replication
	bin/bench-replication -quick -paraply $(BIN) $(BENCH_FLAGS)

# make bench-clone  paraply clone against mariadb-dump | mariadb and mydumper |
#                   myloader, to caught up on one durable target (docs/clone.md):
#                   8 tables of 1M rows, about an hour on two cores; results in
#                   bench/results/DATE-clone/. Needs mydumper (apt-get install mydumper).
.PHONY: bench-clone
bench-clone: deps build
	$(GO) build -o bin/bench-clone ./bench/clone
	bin/bench-clone -paraply $(BIN) $(BENCH_FLAGS)

# make soak   the fault soak of the README's Reliability section: under a
#             counter workload and sysbench, SOAK_FAULTS faults (default 240)
#             at random (SIGKILL of paraply, kills and restarts of both
#             servers, connections cut, stalled and slowed by a proxy, a full
#             relay log), stopping early after SOAK_DURATION; then a final
#             catch-up, verify and exact counters. Prints the table and
#             writes it to bin/soak.md. `make test` runs the same test with
#             24 shorter faults. SOAK_SEED repeats a run's order of faults.
SOAK_FAULTS ?= 240
SOAK_DURATION ?= 40m
SOAK_SCALE ?= 1
SOAK_SEED ?=
soak: deps
	@mkdir -p bin
	PARAPLY_SOAK_FAULTS=$(SOAK_FAULTS) PARAPLY_SOAK_DURATION=$(SOAK_DURATION) PARAPLY_SOAK_SCALE=$(SOAK_SCALE) \
	PARAPLY_SOAK_SEED=$(SOAK_SEED) PARAPLY_SOAK_TABLE=$(CURDIR)/bin/soak.md \
		$(GO) test -count=1 -v -timeout 90m -run '^TestFaultSoak$$' ./cmd/paraply

# make fidelity-mtr  paraply against MariaDB's own replica over MariaDB's own
#                    test suite (TestMariaDBSuite, issue 34): each file of
#                    cmd/paraply/testdata/mtr/files.txt runs on a source
#                    that both replicate, the targets are compared with the
#                    source before every DROP/TRUNCATE and at the end, and
#                    each file gets a verdict (equal, paraply worse, native
#                    worse, both differ, skipped); the
#                    table goes to bin/mtr.md. A file where paraply does
#                    worse fails it. MTR_FORMAT is the source's
#                    binlog_format (ROW, MIXED or STATEMENT). make test runs
#                    the same test on the 26 files of quick.txt. See
#                    docs/mariadb-suite.md.
MTR_FORMAT ?= ROW
.PHONY: fidelity-mtr
fidelity-mtr: deps
	@mkdir -p bin
	PARAPLY_MTR_LIST=full PARAPLY_MTR_BINLOG_FORMAT=$(MTR_FORMAT) PARAPLY_MTR_REPORT=$(CURDIR)/bin/mtr.md \
		$(GO) test -count=1 -v -timeout 300m -run '^TestMariaDBSuite$$' ./cmd/paraply
