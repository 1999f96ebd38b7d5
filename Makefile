# Convenience targets; the scripts are the source of truth.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: setup build test test-unit demo release install check-units bench clean
setup:
	./scripts/setup.sh
build:
	swift build
test:
	./scripts/test.sh
# The unit tier: no child process, no bus (docs/architecture.md#tests-in-tiers).
UNIT_SUITES = RelinkModelTests|RelinkAPITests|RestorationTests|RelinkClientTests|DaemonInProcessTests
test-unit:
	swift build --build-tests
	swift test --skip-build --filter '$(UNIT_SUITES)'
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
