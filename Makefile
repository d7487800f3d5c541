# kernelopt build. `make` builds build/kopt (release, jansson/sqlite linked statically so the
# binary runs on the GPU machine, which has no jansson). `make test` builds the unit tests with
# ASan/UBSan and runs them. `make gpu-test` needs a CUDA GPU with torch+triton.
CC      ?= cc
CSTD    := -std=c17 -D_GNU_SOURCE
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
INC     := -Isrc
CFLAGS_REL := $(CSTD) $(WARN) $(INC) -O2 -g
CFLAGS_TST := $(CSTD) $(WARN) $(INC) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

LIBS_STATIC := -Wl,-Bstatic -ljansson -lsqlite3 -Wl,-Bdynamic -lm -lpthread -ldl
LIBS_DYN    := -ljansson -lsqlite3 -lm -lpthread -ldl

SRC  := $(sort $(wildcard src/*/*.c))
LIB_SRC := $(filter-out src/cli/main.c,$(SRC))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))

REL_OBJ := $(patsubst src/%.c,build/rel/%.o,$(SRC))
TST_OBJ := $(patsubst src/%.c,build/tst/%.o,$(LIB_SRC))
TST_TOBJ := $(patsubst tests/unit/%.c,build/tst/tests/%.o,$(TEST_SRC))

.PHONY: all test unit valgrind bench gpu-test bench-gpu clean fmt
all: build/kopt

build/kopt: $(REL_OBJ)
	$(CC) $(CFLAGS_REL) -o $@ $^ $(LIBS_STATIC)

build/rel/%.o: src/%.c $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_REL) -c -o $@ $<

build/tst/%.o: src/%.c $(wildcard src/*/*.h)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_TST) -c -o $@ $<

build/tst/tests/%.o: tests/unit/%.c $(wildcard src/*/*.h) tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_TST) -c -o $@ $<

build/unit-tests: $(TST_OBJ) $(TST_TOBJ)
	$(CC) $(CFLAGS_TST) -o $@ $^ -lcriterion $(LIBS_DYN)

# kopt built with sanitizers, for CLI-level tests driven by the fake worker.
build/kopt-asan: $(TST_OBJ) build/tst/cli/main.o
	$(CC) $(CFLAGS_TST) -o $@ $^ $(LIBS_DYN)

# A python with torch for the worker's CPU tensor tests (CI: Debian's python3-torch).
TORCH_PYTHON ?= $(shell for p in python3 /usr/bin/python3; do $$p -c 'import torch' >/dev/null 2>&1 && { echo $$p; break; }; done)

# The test command of the README: unit tests (ASan/UBSan) and CLI tests with the fake worker.
test: build/unit-tests build/kopt-asan build/kopt
	KOPT_ROOT=$(CURDIR) ASAN_OPTIONS=detect_leaks=1 ./build/unit-tests --jobs 2
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/run.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/llm_optimize.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/bench.sh
	python3 tests/worker/test_protocol_nogpu.py
	@test -n "$(TORCH_PYTHON)" || { echo "make test: the worker's tensor tests need a python with torch (Debian: apt-get install python3-torch; or TORCH_PYTHON=...)"; exit 1; }
	$(TORCH_PYTHON) tests/worker/test_tensors_cpu.py

# Unit tests under valgrind (release-style build, no sanitizers).
valgrind: build/unit-tests-vg
	KOPT_ROOT=$(CURDIR) valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
	  --trace-children=yes --trace-children-skip='*python*,*/sh,*/bash,*/env' -q \
	  ./build/unit-tests-vg --jobs 1

build/unit-tests-vg: $(filter-out build/rel/cli/main.o,$(REL_OBJ)) $(patsubst tests/unit/%.c,build/rel/tests/%.o,$(TEST_SRC))
	$(CC) $(CFLAGS_REL) -o $@ $^ -lcriterion $(LIBS_DYN)

build/rel/tests/%.o: tests/unit/%.c $(wildcard src/*/*.h) tests/unit/testutil.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_REL) -c -o $@ $<

bench: build/kopt
	bash tools/bench_parse.sh

bench-gpu: build/kopt
	bash tools/bench_gpu.sh && python3 tools/bench_table.py build/bench docs/BENCHMARKS.md

gpu-test: build/kopt
	bash tests/gpu/run.sh

clean:
	rm -rf build
