# kernelopt build. `make` builds build/kopt (release, jansson/sqlite linked statically so the
# binary runs on the GPU machine, which has no jansson). `make test` checks (and installs, when
# root or sudo) the Debian/Ubuntu packages it needs (`make deps`, tools/deps.sh), then builds the
# unit tests with ASan/UBSan and runs them with the CLI tests (`make check`: the same without the
# package step). `make demo` is the first run on a GPU machine; `make demo-cpu` shows the flow
# with the fake worker. `make install PREFIX=...`, `make dist`, `make fmt`, `make lint`,
# `make valgrind`, `make browser-check`. `make gpu-test` needs a CUDA GPU with torch+triton.
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

VERSION := $(shell sed -n 's/^\#define KOPT_VERSION "\(.*\)"/\1/p' src/cli/cli.h)
PREFIX  ?= /usr/local
DESTDIR ?=

.PHONY: all deps test check unit cli-tests valgrind bench gpu-test bench-gpu clean fmt lint install uninstall dist mutate interp-check interp-ci \
        demo demo-cpu browser-check
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

# The packages the build and the tests need (tools/deps.sh: installs the missing ones as root or
# with passwordless sudo, else prints the command and stops). One dpkg-query when all is there.
deps:
	@bash tools/deps.sh --test

# The test command of the README: the packages, then `make check`.
test: deps
	@$(MAKE) --no-print-directory check

# Unit tests (ASan/UBSan) and CLI tests with the fake worker, the worker's protocol and tensors;
# one after another, also under make -j (the CLI tests time and kill processes).
check:
	@$(MAKE) --no-print-directory unit
	@$(MAKE) --no-print-directory cli-tests
	python3 tests/worker/test_protocol_nogpu.py
	@test -n "$(TORCH_PYTHON)" || { echo "make test: the worker's tensor tests need a python with torch (Debian: apt-get install python3-torch; or TORCH_PYTHON=...)"; exit 1; }
	$(TORCH_PYTHON) tests/worker/test_tensors_cpu.py
	$(TORCH_PYTHON) tests/worker/test_guard_cpu.py
	$(TORCH_PYTHON) tests/worker/test_plan_launcher_cpu.py $(CURDIR)/build/kopt
	$(TORCH_PYTHON) tests/worker/test_cubin_cpu.py
	$(TORCH_PYTHON) tests/worker/test_screen_cpu.py
	$(TORCH_PYTHON) tests/worker/test_writes_cpu.py
	$(TORCH_PYTHON) tests/worker/test_displace_cpu.py
	$(TORCH_PYTHON) tests/worker/test_isolate_cpu.py
	$(TORCH_PYTHON) tests/worker/test_fresh_cpu.py

unit: build/unit-tests
	KOPT_ROOT=$(CURDIR) ASAN_OPTIONS=detect_leaks=1 ./build/unit-tests --jobs 2

cli-tests: build/kopt-asan build/kopt
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/run.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/usage.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/llm_optimize.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/bench.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/search_gating.sh
	KOPT=$(CURDIR)/build/kopt-asan bash tests/cli/lint.sh
	KOPT=$(CURDIR)/build/kopt bash tests/cli/install.sh

# Unit tests under valgrind (release-style build, no sanitizers). Only real findings are shown:
# Criterion's runner sockets are suppressed (tools/lint/valgrind.supp) and a forked child that
# does not exec is not reported twice (--child-silent-after-fork).
valgrind: build/unit-tests-vg
	KOPT_ROOT=$(CURDIR) valgrind --error-exitcode=9 --leak-check=full --errors-for-leak-kinds=definite \
	  --suppressions=tools/lint/valgrind.supp --child-silent-after-fork=yes \
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

# The GPU suite. build/kopt is built only when missing: on a GPU machine without C headers a
# carried binary is used as it is (a copied tree's newer timestamps would otherwise start a
# rebuild that fails there); run `make build/kopt` first where you edit.
gpu-test:
	@test -x build/kopt || $(MAKE) --no-print-directory build/kopt
	bash tests/gpu/run.sh

# Templates run by Triton's interpreter on the CPU against PyTorch (needs a python with torch and
# triton: TRITON_PYTHON=...; skipped with one line when triton does not import). An existing
# build/kopt is used as is (as gpu-test does): on the GPU machine, which has no C dev packages, the
# carried binary is older than the copied sources.
TRITON_PYTHON ?= python3
interp-check:
	@test -x build/kopt || $(MAKE) --no-print-directory build/kopt
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_scan_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_col_softmax_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_col_lse_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_group_norm_interp.py
	$(TRITON_PYTHON) tests/interp/test_compile_sm90.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_aligned_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_colreuse_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_plan_interp.py
	TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_checksum_interp.py
	TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_compare_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_fence_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_ln_prologue_interp.py
	KOPT=$(CURDIR)/build/kopt TRITON_INTERPRET=1 $(TRITON_PYTHON) tests/interp/test_revloop_interp.py

# interp-check where no python has triton (CI): a venv over the system python's torch (Debian's
# python3-torch) with Triton from PyPI at the GPU machine's version; the venv stays in build/.
# The tests must run here: a venv that cannot be made is an error, not a skip.
TRITON_VERSION ?= 3.6.0
INTERP_VENV := build/triton-venv
$(INTERP_VENV)/bin/python:
	@bash tools/deps.sh --interp
	/usr/bin/python3 -m venv --system-site-packages $(INTERP_VENV)
	$(INTERP_VENV)/bin/pip install -q --disable-pip-version-check "triton==$(TRITON_VERSION)"
interp-ci: $(INTERP_VENV)/bin/python build/kopt
	$(INTERP_VENV)/bin/python -c 'import torch, triton; print("interp-ci: torch", torch.__version__, "triton", triton.__version__)'
	@$(MAKE) --no-print-directory interp-check TRITON_PYTHON=$(CURDIR)/$(INTERP_VENV)/bin/python

# Mutation testing of the verdict code (tools/mutate.py; MUTATE_ARGS="--files decide.c --max 20"):
# every mutant must make a test fail; exit 1 below 90% killed. Hours on 2 cores for every file.
mutate: build/unit-tests build/kopt-asan
	python3 tools/mutate.py $(MUTATE_ARGS)

# ---- install, dist ------------------------------------------------------------------------------
# PREFIX/bin/kopt and PREFIX/share/kopt/{worker,templates,prompts}: kopt finds its share folder
# from its own path (src/util/fs.h, fs_kopt_root), so an installed or copied tree needs no variable.
SHARE_DIRS := worker templates prompts
install: build/kopt
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/kopt
	install -m 755 build/kopt $(DESTDIR)$(PREFIX)/bin/kopt
	cd $(DESTDIR)$(PREFIX)/share/kopt && rm -rf $(SHARE_DIRS)
	tar -cf - --exclude=__pycache__ --exclude='*.pyc' $(SHARE_DIRS) | tar -xf - -C $(DESTDIR)$(PREFIX)/share/kopt
	@echo "installed $(DESTDIR)$(PREFIX)/bin/kopt and $(DESTDIR)$(PREFIX)/share/kopt"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/kopt
	rm -rf $(DESTDIR)$(PREFIX)/share/kopt

# A source tarball of the working tree's files (tracked and new, not ignored ones), whose
# extracted tree builds and passes `make test`: build/kopt-$(VERSION).tar.gz.
dist:
	@command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "make dist: needs the git checkout (it lists the files with git ls-files)"; exit 1; }
	@mkdir -p build
	git ls-files -z --cached --others --exclude-standard | xargs -0 sh -c 'for f; do [ -f "$$f" ] && printf "%s\0" "$$f"; done' sh \
	  | tar --null -T - --transform 's,^,kopt-$(VERSION)/,' -czf build/kopt-$(VERSION).tar.gz
	@echo "build/kopt-$(VERSION).tar.gz"

# ---- demos --------------------------------------------------------------------------------------
# On a GPU machine: the build packages, a python with torch and triton (found or made), and
# `kopt optimize` on an example with a short budget (tools/demo.sh; PYTHON=... or KOPT_PYTHON).
# A GPU machine without the build packages (a kopt binary built elsewhere and copied to
# build/kopt: README, Requirements) runs the demo with that binary instead of failing.
demo:
	@if [ -x build/kopt ] && ! bash tools/deps.sh --build --check >/dev/null 2>&1; then \
	  echo "make demo: no build packages here; using the existing build/kopt ($$(build/kopt --version | head -1))"; \
	else bash tools/deps.sh --demo && $(MAKE) --no-print-directory all; fi
	bash tools/demo.sh $(if $(PYTHON),--python $(PYTHON))

# Anywhere, no GPU: inspect -> optimize -> report with the fake worker, in seconds.
demo-cpu: build/kopt
	bash tools/demo.sh --cpu

# ---- checks -------------------------------------------------------------------------------------
# clang-format (.clang-format) on the files that follow the style (tools/lint/fmt-files.txt;
# the rest of the tree predates the committed style and is not reformatted wholesale), and
# cppcheck with its committed configuration (tools/lint/cppcheck.supp).
CLANG_FORMAT ?= clang-format
CPPCHECK     ?= cppcheck
FMT_FILES := $(shell cat tools/lint/fmt-files.txt 2>/dev/null)
fmt:
	$(CLANG_FORMAT) -i $(if $(FILES),$(FILES),$(FMT_FILES))

lint:
	@bash tools/deps.sh --lint
	$(CLANG_FORMAT) --dry-run -Werror $(FMT_FILES)
	$(CPPCHECK) --quiet --error-exitcode=1 --std=c11 -D_GNU_SOURCE -Isrc --enable=warning,portability \
	  --inline-suppr --library=tools/lint/jansson.cfg --suppressions-list=tools/lint/cppcheck.supp -j2 src
	@echo "lint: clang-format ($(words $(FMT_FILES)) files) and cppcheck clean"

# The recorded reports in headless Chromium: no console error, the chart present, a screenshot
# next to the log (build/browser/). Needs Debian's chromium (tools/deps.sh --browser).
browser-check: build/kopt
	@bash tools/deps.sh --browser
	KOPT=$(CURDIR)/build/kopt bash tests/cli/browser.sh

clean:
	rm -rf build
