# The targets CI runs (make ci) and the ones a developer reaches for.
GO       ?= go
FUZZTIME ?= 10s
COVERMIN ?= 95.0
LIBPKGS  := . ./internal/...

.PHONY: ci test vet fmt fmt-check coverage fuzz bench

ci: fmt-check test coverage fuzz

test: vet
	$(GO) test -race -count=1 ./...

vet:
	$(GO) vet ./...
	GOOS=windows $(GO) vet ./...
	GOOS=darwin $(GO) vet ./...

fmt:
	gofmt -w .

fmt-check:
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# Statement coverage of the library (examples excluded), gated at COVERMIN %.
coverage:
	$(GO) test -count=1 -covermode=atomic -coverpkg=./,./internal/... -coverprofile=cover.out $(LIBPKGS)
	@$(GO) tool cover -func=cover.out | awk -v min=$(COVERMIN) '/^total:/ { sub("%","",$$3); printf "coverage: %s%% of statements (gate %s%%)\n", $$3, min; if ($$3+0 < min+0) { print "coverage below the gate"; exit 1 } }'

# Short runs of every fuzz target; FUZZTIME=5m make fuzz for a longer one.
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzResolve$$' -fuzztime=$(FUZZTIME) .
	$(GO) test -run='^$$' -fuzz='^FuzzSetHead$$' -fuzztime=$(FUZZTIME) ./internal/markdown

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=1 $(LIBPKGS)
