# paraply: two commands for a newcomer.
#   make demo   install what is missing, build, run paraply on sandboxed MariaDB servers
#   make test   run every test (real MariaDB servers, started and stopped by the tests)

GO ?= go
BIN := bin/paraply

.PHONY: all build demo test deps vet fmt clean

all: build

deps:
	@scripts/install-deps.sh

build:
	$(GO) build -o $(BIN) ./cmd/paraply

demo: deps build
	$(BIN) demo

# Packages that start servers run one at a time (-p 1): the machines this
# runs on have two cores.
test: deps
	$(GO) vet ./...
	$(GO) test -p 1 -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

fmt:
	gofmt -l -w cmd internal

clean:
	rm -rf bin
