# strata — the one entry point. CMake (with Ninja) does the building; this file
# names the jobs. `make help` lists them.
.DEFAULT_GOAL := help
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=
ifneq ($(CI),)
CMAKE_FLAGS += -DSTRATA_WERROR=ON
endif
VENV := .venv
CTEST := ctest --output-on-failure -j $(JOBS) --timeout 900

# build/<variant>: release, debug, asan (ASan+UBSan), tsan.
define configure
	cmake -S . -B build/$(1) -G Ninja $(2) $(CMAKE_FLAGS) >/dev/null
	cmake --build build/$(1) -j $(JOBS)
endef
define configure_only
	cmake -S . -B build/$(1) -G Ninja $(2) $(CMAKE_FLAGS) >/dev/null
endef

.PHONY: help setup build debug lint hardening-matrix peers-if-missing test test-asan test-tsan test-all test-python test-rust test-rust-package test-rust-asan fuzz bench bench-run peers lab clean

help:
	@echo "make setup      install Debian packages and the lab's Python venv"
	@echo "make test       build (Release) and run every test: CTest + cargo test + pytest"
	@echo "make test-asan  the C/C++ suite under AddressSanitizer + UBSan (assertions on)"
	@echo "make test-rust  the Rust crates' tests (cargo test in rust/)"
	@echo "make test-rust-asan  the Rust crates' tests under AddressSanitizer (nightly)"
	@echo "make test-tsan  the threaded tests under ThreadSanitizer (assertions on)"
	@echo "make test-all   test, test-asan, test-tsan and test-rust-asan (CI adds make fuzz)"
	@echo "make lint       clang-format on changed C/C++ lines, ruff on the lab, commit subjects, kernel calls"
	@echo "make hardening-matrix  libstrata-hardened + its model test with each policy alone and each left out"
	@echo "make fuzz       the libFuzzer harnesses (clang-14), FUZZ_SECONDS (300) each"
	@echo "make bench      the benchmarks (ratios against peers; slow)"
	@echo "make peers      build mimalloc 3 and snmalloc from crates.io sources into build/peers (needs cargo)"
	@echo "make lab        build, run the evaluation, write results/latest/report.html"

setup:
	@tools/setup.sh

build: setup
	$(call configure,release,-DCMAKE_BUILD_TYPE=Release)

debug: setup
	$(call configure,debug,-DCMAKE_BUILD_TYPE=Debug)

# The lab's tests run every peer of the allocator registry, mimalloc 3 and
# snmalloc included: they are built first when missing (tools/peers/build.sh).
test: build peers-if-missing
	cd build/release && $(CTEST)
	@$(MAKE) --no-print-directory test-rust
	@$(MAKE) --no-print-directory test-python

test-python:
	@if [ -f lab/pyproject.toml ]; then \
	  STRATA_LAB_BUILD_DIR=$(CURDIR)/build/release $(VENV)/bin/python -m pytest -q lab/tests; \
	fi

# The Rust crates (rust/): their build scripts compile strata's C/C++ with cc.
CARGO_PATH := PATH="$$HOME/.cargo/bin:$$PATH"
# Lint (rustfmt, clippy, rustdoc), the tests, the examples, then
# rust/package.sh: the .crate files built and doc-tested outside the repository.
test-rust:
	cd rust && $(CARGO_PATH) cargo fmt --check
	cd rust && $(CARGO_PATH) cargo clippy --workspace --all-targets --quiet -- -D warnings
	cd rust && $(CARGO_PATH) RUSTDOCFLAGS=-Dwarnings cargo doc --workspace --no-deps --quiet
	cd rust && $(CARGO_PATH) cargo test --workspace
	cd rust && $(CARGO_PATH) cargo run --quiet --release -p strata-reap --example parser_arena >/dev/null
	cd rust && $(CARGO_PATH) cargo run --quiet --release -p strata-reap --example service_churn >/dev/null
	@$(MAKE) --no-print-directory test-rust-package

# The crates as crates.io gets them (vendor/ copied from include/ and src/),
# built and doc-tested in a fresh folder outside the repository.
test-rust-package:
	$(CARGO_PATH) rust/package.sh

# -Zsanitizer needs a nightly toolchain: rustup installs one when it is missing.
test-rust-asan:
	@$(CARGO_PATH) rustup run nightly rustc --version >/dev/null 2>&1 || \
	  $(CARGO_PATH) rustup toolchain install nightly --profile minimal
	cd rust && $(CARGO_PATH) STRATA_REAP_CFLAGS=-fsanitize=address RUSTFLAGS=-Zsanitizer=address \
	  RUSTDOCFLAGS=-Zsanitizer=address CARGO_TARGET_DIR=target/asan \
	  cargo +nightly test -p strata-reap -p strata-alloc --features strata-reap/nightly --target x86_64-unknown-linux-gnu

test-asan: setup
	$(call configure,asan,-DCMAKE_BUILD_TYPE=Debug -DSTRATA_ASSERTIONS=ON -DSTRATA_SANITIZE=address -DSTRATA_BUILD_BENCH=OFF)
	cd build/asan && ASAN_OPTIONS=allocator_may_return_null=1:detect_leaks=1 $(CTEST) -LE no-asan

test-tsan: setup
	$(call configure,tsan,-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTRATA_ASSERTIONS=ON -DSTRATA_SANITIZE=thread -DSTRATA_BUILD_BENCH=OFF)
	cd build/tsan && $(CTEST) --no-tests=error -L threads -LE no-tsan

# Each hardening policy alone and each left out (config.hpp, namespace
# policy): libstrata-hardened and the model test, only those targets.
hardening-matrix: setup
	$(call configure_only,hardening,-DCMAKE_BUILD_TYPE=Release -DSTRATA_HARDENING_MATRIX=ON)
	cmake --build build/hardening -j $(JOBS) --target hardening_matrix
	cd build/hardening && $(CTEST) -L hardening-matrix

test-all: test test-asan test-tsan test-rust-asan

# The formatters and linters (tools/lint, CONTRIBUTING.md): the one door to
# the kernel, clang-format on the C/C++ lines changed since the base
# (STRATA_LINT_BASE, default origin/main; tools/lint/format.sh), ruff on the
# lab, commit subjects. The tools, pinned in tools/lint/requirements.txt, go
# into the lab's venv.
LINT_REQUIREMENTS := tools/lint/requirements.txt
lint: setup
	@for req in $$(grep -v '^#' $(LINT_REQUIREMENTS)); do \
	  $(VENV)/bin/pip freeze 2>/dev/null | grep -qxF "$$req" || { $(VENV)/bin/pip install -q -r $(LINT_REQUIREMENTS); break; }; \
	done
	tools/lint/kernel_calls.sh
	tools/lint/format.sh $(VENV)/bin

# The libFuzzer harnesses (fuzz/, docs/fuzzing.md) in build/fuzz: clang-14,
# ASan+UBSan, each for FUZZ_SECONDS from its corpus fuzz/corpus/<harness>
# (read only); new inputs go to build/fuzz/corpus/<fuzzer>, a crash to
# build/fuzz/crashes/ and stops make. FUZZ_SEED: libFuzzer's -seed (0: a new
# one each run); CI fixes it, so that its pass is the same on every commit.
FUZZ_SECONDS ?= 300
FUZZ_SEED ?= 0
FUZZERS ?= malloc reap reap_unchecked
fuzz: setup
	cmake -S . -B build/fuzz -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG="-g -O1" \
	  -DCMAKE_CXX_FLAGS_DEBUG="-g -O1" -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
	  -DSTRATA_FUZZ=ON -DSTRATA_SANITIZE=address -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_BENCH=OFF \
	  $(CMAKE_FLAGS) >/dev/null
	cmake --build build/fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZERS))
	@for f in $(FUZZERS); do \
	  mkdir -p build/fuzz/corpus/$$f build/fuzz/crashes; \
	  echo "## fuzz_$$f for $(FUZZ_SECONDS) s"; \
	  build/fuzz/fuzz/fuzz_$$f -max_total_time=$(FUZZ_SECONDS) -seed=$(FUZZ_SEED) -print_final_stats=1 \
	    -artifact_prefix=build/fuzz/crashes/$$f- build/fuzz/corpus/$$f fuzz/corpus/$${f%_unchecked} || exit 1; \
	done

bench: build
	@$(MAKE) --no-print-directory bench-run

# Each benchmark of `strata-lab bench` (docs/lab.md, "Benchmarks") on the
# Release build, at its default sizes; BENCHMARKS picks some.
BENCHMARKS ?= layers reap malloc shims
bench-run:
	@for b in $(BENCHMARKS); do \
	  echo; echo "## strata-lab bench $$b"; \
	  STRATA_LAB_BUILD_DIR=$(CURDIR)/build/release $(VENV)/bin/strata-lab bench $$b || exit 1; \
	done

# mimalloc 3 and snmalloc, which Debian does not package, for `strata-lab bench
# malloc` (contenders mimalloc3 and snmalloc). Sources through cargo; not part of test.
peers:
	JOBS=$(JOBS) tools/peers/build.sh

peers-if-missing:
	@$(VENV)/bin/python -m strata_lab.allocators check mimalloc3 snmalloc mimalloc-secure snmalloc-checks >/dev/null 2>&1 || \
	  $(MAKE) --no-print-directory peers

# The evaluation (docs/lab.md, "Evaluation"): Release build, then the default
# matrix; the report goes to results/<date-time>/ (results/latest). LAB_CONFIG
# picks another matrix (lab/configs/full.toml, smoke.toml).
LAB_CONFIG ?= lab/configs/default.toml
# The hardening section compares the peers' hardened builds (make peers).
lab: build peers-if-missing
	STRATA_LAB_BUILD_DIR=$(CURDIR)/build/release $(VENV)/bin/strata-lab evaluate --config $(LAB_CONFIG)

clean:
	rm -rf build
