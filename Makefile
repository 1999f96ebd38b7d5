# Convenience targets; the scripts are the source of truth.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: setup build test test-unit demo release man install deb check-deb check-units bench clean
setup:
	./scripts/setup.sh
build:
	swift build
test:
	./scripts/test.sh
# The unit tier: no child process, no bus (docs/architecture.md#tests-in-tiers).
UNIT_SUITES = RelinkModelTests|RelinkAPITests|RestorationTests|DaemonCoreTests|RelinkClientTests|DaemonInProcessTests
test-unit:
	swift build --build-tests
	swift test --skip-build --filter '$(UNIT_SUITES)'
demo:
	./scripts/demo.sh
release:
	swift build -c release
# relinkd.8 and relinkctl.1 from the --help texts, into .build/man (install.sh takes them from there).
man: release
	./scripts/manpages.sh
install: release man
	./scripts/install.sh "$(PREFIX)" "$(DESTDIR)"
# The Debian package, in .build/deb (docs/packaging.md); check-deb also runs
# lintian and an install, start and purge round trip on this machine (root).
deb:
	./scripts/build-deb.sh
check-deb:
	./scripts/check-deb.sh
check-units:
	./scripts/check-units.sh
# Benchmarks print figures and compare with a peer in the same run (docs/benchmarks.md).
bench:
	bench/dbus/run.sh
	bench/store/run.sh
	bench/relink/run.sh
clean:
	rm -rf .build
