# Two commands: `make demo` and `make test` (see README.md).
# They install what they need on a fresh Debian machine (as root).

BUILD ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
DEB_PACKAGES = cmake gcc g++ make libcjson-dev libgomp1 pkg-config

.PHONY: all deps build demo test test-asan test-tsan docs bench bench-deps bench-onednn bench-sdpa clean install fuzz

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

# `make demo`: a BERT-base encoder layer (f32, then retyped to bf16) and a
# llama-style MLP block with int4 weights (examples/graphs/, written by
# examples/graphs/make_demo_graphs.py): the partitions the fusion pass forms
# (the library's verbose line per compiled partition: pattern row, kernel,
# ops), the check of every partition against the op-by-op reference, then
# time, GFLOP/s and fraction of this machine's peak (bench_peak measures the
# peak once, into $(BUILD)/bench/peak.txt, when the file is missing).
DEMO_BERT = --expected-n-partitions=9 --case=examples/graphs/bert_base_encoder_f32.json
DEMO_LLAMA = --expected-n-partitions=1 --case=examples/graphs/llama_mlp_int4.json
DEMO_CASES = $(DEMO_BERT) --dt=bf16 $(DEMO_BERT) --dt= $(DEMO_LLAMA)
demo_partitions = ONEDNN_VERBOSE=1 ./$(BUILD)/partita --mode=P --perf-runs=1 --perf-warmup=0 --peak=none $(1) \
	  | awk -F, '$$3 == "compile" { sub(/^kernel:/, "", $$10); printf "    %-12s %-30s %-34s %s\n", $$5, $$6, $$10, $$7 }'

demo: build
	@[ -f $(BUILD)/bench/peak.txt ] || { echo "== measuring this machine's peaks (bench_peak, once)"; \
	  OMP_NUM_THREADS=$(JOBS) ./$(BUILD)/bench/bench_peak --seconds=0.2 | grep '^peak '; }
	@echo "== partitions of examples/graphs/bert_base_encoder_f32.json (pattern row, kernel, ops)"
	@$(call demo_partitions,$(DEMO_BERT))
	@echo "== partitions of examples/graphs/llama_mlp_int4.json"
	@$(call demo_partitions,$(DEMO_LLAMA))
	@echo "== correctness (mode C): every partition against the op-by-op reference"
	./$(BUILD)/partita --mode=C $(DEMO_CASES)
	@echo "== performance (mode P): median of 10 runs per partition"
	./$(BUILD)/partita --mode=P $(DEMO_CASES)

# Rewrites the generated tables of docs/ops.md and docs/fusion.md from the
# library's registries (the CTest docs_tables_current checks they are current).
docs: build
	./$(BUILD)/partita-docs --write docs

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Debug at -O1: ASan's own advice for usable speed; the suite ran 939 s at
# -O0 on 2 cores and 476 s at -O1 (the GEMM tests' loops dominate).
test-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DPARTITA_SANITIZE=ON >/dev/null
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --output-on-failure -j $(JOBS)

# ThreadSanitizer (docs/reliability.md, "Sanitizers"): gcc -fsanitize=thread
# in $(BUILD_TSAN).  libgomp is not instrumented (TSan cannot see its
# barriers), so the suite runs with one OpenMP thread and the library's own
# thread safety is exercised with pthreads (test_int_concurrency); any TSan
# report fails its test.  Left out: the install tests (they build consumers
# without the sanitizer), the tests that force OpenMP teams of several
# threads whatever OMP_NUM_THREADS says (test_int_gemm*, test_int_ref_kernels2,
# test_int_mem_kernels*: false reports at libgomp's barriers), the CLI's batch runs over the
# shared harness files and tests/graphs (single-threaded, 4-10x slower here), and the
# PARTITA_AMX=0 reruns (the same threading with other microkernels; CI took 26.5 min with them).
TSAN_FLAGS = -fsanitize=thread -fno-omit-frame-pointer
TSAN_EXCLUDE ?= ^install_|^partita_batch_|^partita_graphs_ci$$|^test_int_gemm$$|^test_int_gemm_(generic|avx2)$$|^test_int_gemm_small_blocks(_generic|_avx2)?$$|^test_int_ref_kernels2$$|^test_int_mem_kernels(_generic|_avx2)?$$|_noamx$$
test-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$(TSAN_FLAGS)" \
	  -DCMAKE_CXX_FLAGS="$(TSAN_FLAGS)" -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread \
	  -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
	cmake --build $(BUILD_TSAN) -j $(JOBS)
	cd $(BUILD_TSAN) && OMP_NUM_THREADS=1 TSAN_OPTIONS=halt_on_error=1:exitcode=66:second_deadlock_stack=1 \
	  ctest --output-on-failure -j $(JOBS) -E '$(TSAN_EXCLUDE)'

# Benchmarks (never part of `make test`; see docs/bench.md). `make bench`
# installs what they need (OpenBLAS from apt, oneDNN from PyPI into a venv
# under the build directory), then runs bench_peak, bench_matmul,
# bench_membound and bench_vs_onednn in that order. Options per benchmark:
#   make bench BENCH_MATMUL_ARGS="--kinds=f32 --shapes=1024x1024x1024"
#   make bench BENCH_VS_ONEDNN_ARGS="--filter=mlp" BENCH_PEAK_ARGS="--seconds=0.5"
# `make bench-sdpa` runs the SDPA benchmark with BENCH_ARGS, e.g. BENCH_ARGS="--s=4096".
BENCH_DIR = $(BUILD)/bench
BENCH_DEB_PACKAGES = libopenblas-dev python3-venv
ONEDNN_VERSION ?= 2026.1.0
ONEDNN_VENV = $(BENCH_DIR)/venv
ONEDNN_LIBRARY = $(ONEDNN_VENV)/lib/libdnnl.so.3

# apt for OpenBLAS (before the build: CMake looks for it when configuring).
bench-deps: deps
	@missing=""; for p in $(BENCH_DEB_PACKAGES); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi; \
	fi

# oneDNN, the yardstick of bench_vs_onednn, from the PyPI wheels (the
# library, its SYCL/TBB/OpenCL runtime and headers land in the venv's lib/
# and include/). Nothing but bench_vs_onednn uses it.
$(ONEDNN_LIBRARY): | bench-deps
	python3 -m venv $(ONEDNN_VENV)
	$(ONEDNN_VENV)/bin/pip install -q onednn==$(ONEDNN_VERSION) onednn-devel==$(ONEDNN_VERSION)

bench-onednn: $(ONEDNN_LIBRARY)

# The build runs after bench-deps (even under -j) so that CMake finds OpenBLAS.
bench: bench-deps bench-onednn
	$(MAKE) --no-print-directory build
	OMP_NUM_THREADS=2 ./$(BENCH_DIR)/bench_peak $(BENCH_PEAK_ARGS)
	OMP_NUM_THREADS=2 ./$(BENCH_DIR)/bench_matmul $(BENCH_MATMUL_ARGS)
	OMP_NUM_THREADS=2 ./$(BENCH_DIR)/bench_membound $(BENCH_MEMBOUND_ARGS)
	OMP_NUM_THREADS=2 ./$(BENCH_DIR)/bench_vs_onednn --onednn-dir=$(abspath $(ONEDNN_VENV))/lib $(BENCH_VS_ONEDNN_ARGS)

bench-sdpa: build
	./$(BENCH_DIR)/bench_sdpa $(BENCH_ARGS)

# Installs headers (C and C++), libpartita.so/.a, the partita CLI, partita.pc
# and the CMake package (find_package(Partita)) under PREFIX; DESTDIR stages
# the tree elsewhere (make install PREFIX=/usr DESTDIR=/tmp/pkgroot).
PREFIX ?= /usr/local
DESTDIR ?=

install: build
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN)

# libFuzzer targets (docs/reliability.md): builds fuzz_json_graph and
# fuzz_c_api with clang, ASan and UBSan in $(BUILD_FUZZ), seeds each corpus
# ($(BUILD_FUZZ)/corpus/<target>) from the project's JSON cases, the saved
# regression inputs and fuzz/seeds/, then runs each target FUZZ_SECONDS.
# Crash inputs land in $(BUILD_FUZZ)/artifacts/.
BUILD_FUZZ ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS = fuzz_json_graph fuzz_c_api
FUZZ_FLAGS ?= -timeout=1 -rss_limit_mb=2048 -malloc_limit_mb=512 -max_len=65536 -print_final_stats=1

fuzz: deps
	@if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' | \
	  clang -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then \
	  echo "installing: clang libclang-rt-14-dev"; \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev; \
	  else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev; fi; \
	fi
	CC=clang CXX=clang++ cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Release -DPARTITA_FUZZ=ON \
	  -DPARTITA_BUILD_TESTS=OFF >/dev/null
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target $(FUZZ_TARGETS)
	mkdir -p $(BUILD_FUZZ)/artifacts $(addprefix $(BUILD_FUZZ)/corpus/,$(FUZZ_TARGETS))
	cp tests/graphs/*.json examples/graphs/*.json $(BUILD_FUZZ)/corpus/fuzz_json_graph/
	for t in $(FUZZ_TARGETS); do \
	  for d in tests/fuzz_regressions/$$t fuzz/seeds/$$t; do \
	    if [ -d $$d ]; then cp $$d/* $(BUILD_FUZZ)/corpus/$$t/ 2>/dev/null || true; fi; done; done
	set -e; for t in $(FUZZ_TARGETS); do \
	  echo "== $$t: $(FUZZ_SECONDS) s"; \
	  OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ./$(BUILD_FUZZ)/$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(BUILD_FUZZ)/artifacts/$$t- $(BUILD_FUZZ)/corpus/$$t; done
