# troupe: the two README commands (`make demo`, `make test`) plus developer habits.
# Every target that builds installs missing Debian packages first.
BUILD      ?= build
JOBS       ?= 2
CMAKE_ARGS ?=
CTEST_ARGS ?=

# ccache keys on relative paths below the repo, so a fresh clone (CI) reuses earlier builds.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

.PHONY: all deps configure build demo test sanitize tsan format format-check clean fuzz fuzz-build \
        fuzz-merge

all: build

deps:
	@bash .ci/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The embedded-default experiment: an MLP on synthetic data over 2 CPU replicas in this process.
demo: configure
	cmake --build $(BUILD) -j $(JOBS) --target troupe
	$(BUILD)/bin/troupe run

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# Sanitizer builds compile at -O1 with line tables only: half the compile time of -O2 -g on CAF's
# templates (actors/collective_peer.cpp under ASan: 27-29 s against 51-64 s, objects half the
# size), and file:line in every report is all the sanitizers need.
SANITIZE_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DTROUPE_ENABLE_CUDA=OFF

# Whole suite under AddressSanitizer + UndefinedBehaviorSanitizer (CPU only).
sanitize: deps
	cmake -S . -B build-asan $(SANITIZE_FLAGS) -DTROUPE_SANITIZE=address $(CMAKE_ARGS)
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  ctest --test-dir build-asan --output-on-failure -j $(JOBS) $(CTEST_ARGS)

# ThreadSanitizer. Debian's libcaf is not built with TSan, so every message hand-off through
# CAF's lock-free mailboxes looks like a race to it (false positives in every actor test); the
# default areas are the concurrent code outside CAF (the replicas' handoff, kernels, collective
# state machines, input pipeline). TSAN_AREAS="coordinator input ..." or "all" runs more.
TSAN_AREAS ?= core kernels collective data
tsan: deps
	cmake -S . -B build-tsan $(SANITIZE_FLAGS) -DTROUPE_SANITIZE=thread $(CMAKE_ARGS)
	cmake --build build-tsan -j $(JOBS) $(if $(filter all,$(TSAN_AREAS)),,--target $(addprefix test_,$(TSAN_AREAS)))
	TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	  ctest --test-dir build-tsan --output-on-failure -j $(JOBS) \
	  $(if $(filter all,$(TSAN_AREAS)),,-L '^($(subst $(eval) ,|,$(strip $(TSAN_AREAS))))$$') $(CTEST_ARGS)

FORMAT_FILES = $(shell git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
format:
	clang-format -i $(FORMAT_FILES)

format-check:
	clang-format --dry-run --Werror $(FORMAT_FILES)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz

# libFuzzer (clang from Debian) on every decoder of outside bytes (tests/fuzz/README.md): builds
# only the fuzz targets and the libraries they use in build-fuzz, then runs each for
# FUZZ_SECONDS on its corpus, FUZZ_PARALLEL at a time, at nice 19. FUZZ_TARGETS picks some.
# `make fuzz-merge` then minimises tests/fuzz/corpus/ with what the runs found.
FUZZ_SECONDS  ?= 600
FUZZ_PARALLEL ?= 1
FUZZ_TARGETS  ?= $(patsubst tests/fuzz/fuzz_%.cpp,%,$(wildcard tests/fuzz/fuzz_*.cpp))
fuzz-build:
	@bash .ci/install-deps.sh clang libclang-rt-14-dev
	cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
	  -DTROUPE_FUZZ=ON -DTROUPE_ENABLE_CUDA=OFF $(CMAKE_ARGS)
	cmake --build build-fuzz -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS))

fuzz: fuzz-build
	tests/fuzz/run_fuzzers.sh run build-fuzz $(FUZZ_SECONDS) $(FUZZ_PARALLEL) $(FUZZ_TARGETS)

fuzz-merge: fuzz-build
	tests/fuzz/run_fuzzers.sh merge build-fuzz $(FUZZ_TARGETS)
