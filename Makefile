# Convenience targets; the scripts are the source of truth.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: setup build test demo release install check-units bench clean
setup:
	./scripts/setup.sh
build:
	swift build
test:
	./scripts/test.sh
demo:
	./scripts/demo.sh
release:
	swift build -c release
install: release
	./scripts/install.sh "$(PREFIX)" "$(DESTDIR)"
check-units:
	./scripts/check-units.sh
# Benchmarks print figures and compare with a peer in the same run (docs/benchmarks.md).
bench:
	bench/dbus/run.sh
	bench/store/run.sh
	bench/relink/run.sh
clean:
	rm -rf .build
