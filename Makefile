# Two commands: `make demo` and `make test` (see README.md).
# They install what they need on a fresh Debian machine (as root).

BUILD ?= build
BUILD_ASAN ?= build-asan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEB_PACKAGES = cmake gcc g++ make libcjson-dev libgomp1 pkg-config

.PHONY: all deps build demo test test-asan docs bench clean install

all: build

# Installs the Debian packages the build needs when any is missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi; \
	fi

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/partita --mode=C --expected-n-partitions=2 --case=examples/graphs/mlp_f32.json
	./$(BUILD)/partita --mode=P --expected-n-partitions=2 --case=examples/graphs/mlp_f32.json

# Rewrites the generated tables of docs/ops.md and docs/fusion.md from the
# library's registries (the CTest docs_tables_current checks they are current).
docs: build
	./$(BUILD)/partita-docs --write docs

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DPARTITA_SANITIZE=ON >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# Runs the SDPA benchmark (not part of the test suite; see docs/bench.md).
# Extra options go through BENCH_ARGS, e.g. make bench BENCH_ARGS="--s=4096".
bench: build
	./$(BUILD)/bench/bench_sdpa $(BENCH_ARGS)

# Installs headers (C and C++), libpartita.so/.a, the partita CLI, partita.pc
# and the CMake package (find_package(Partita)) under PREFIX; DESTDIR stages
# the tree elsewhere (make install PREFIX=/usr DESTDIR=/tmp/pkgroot).
PREFIX ?= /usr/local
DESTDIR ?=

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
