# Convenience targets; the scripts are the source of truth.
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: setup build test demo install check-units clean
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
clean:
	rm -rf .build
