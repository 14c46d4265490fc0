# memprobe: `make` builds build/memprobe; `make check` runs the tests.
# SANITIZE=1: memprobe and the unit tests built with ASan + UBSan into
# build/san/, so sanitized and normal objects never mix (the test programs,
# the workloads, stay plain: see their rule);
# `make check SANITIZE=1` runs the tests against those (docs/testing.md).
SANITIZE ?=
ifeq ($(SANITIZE),1)
BUILD    := build/san
SAN_FLAGS := -fsanitize=address,undefined,float-cast-overflow \
	     -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD    := build
SAN_FLAGS :=
endif
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

# CFLAGS is the user's (make CFLAGS=..., or from the environment); what the
# build needs is in MP_CFLAGS, always given, before CFLAGS (which can add
# to it: -Wno-error, say).
CFLAGS   ?= -O2 -g
MP_CFLAGS := -Wall -Wextra -Werror -std=gnu11 -D_GNU_SOURCE -I$(BUILD) -Ibpf -Iuser
ALL_CFLAGS = $(MP_CFLAGS) $(CFLAGS) $(SAN_FLAGS)

# The version `memprobe --version` prints and every document carries: `git
# describe` of this checkout, "unknown" outside one (a tarball). It is read
# on every make, but $(BUILD)/version changes only when it does, and only the
# objects whose source names MP_VERSION depend on it: a new HEAD, or a tree
# turned dirty, rebuilds those and relinks, nothing else.
MP_VERSION := $(shell [ -e "$(CURDIR)/.git" ] && git -C "$(CURDIR)" describe --always --dirty --tags 2>/dev/null || echo unknown)
MP_CFLAGS += -DMP_VERSION='"$(MP_VERSION)"'
VERSION_OBJS := $(patsubst user/%.c,$(BUILD)/%.o,$(shell grep -l MP_VERSION user/*.c))
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Ivmlinux -Ibpf
# memprobe is one static executable (issue 13): copied to any Linux host or
# container image it runs, whatever libraries and glibc that has. libbpf,
# libelf and zlib are Debian's .a files; cJSON, which Debian ships only as a
# shared library, is compiled here from Debian's cjson source package, which
# scripts/cjson.sh fetches into build/cjson/ once (both builds share it).
# The unit tests and test programs stay dynamic, linked with the same .a
# files; under SANITIZE=1 memprobe is dynamic too (ASan cannot link static).
CJSON_DIR := build/cjson
CJSON_LIB := $(BUILD)/lib/libcjson.a
MP_CFLAGS += -I$(CJSON_DIR)/include
LDLIBS   := $(CJSON_LIB) -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic -lm
ifeq ($(SANITIZE),1)
MEMPROBE_LDLIBS := $(LDLIBS)
else
MEMPROBE_LDLIBS := -static $(CJSON_LIB) -lbpf -lelf -lz -lm
endif

USER_SRCS := $(wildcard user/*.c)
USER_OBJS := $(patsubst user/%.c,$(BUILD)/%.o,$(USER_SRCS))
LIB_OBJS  := $(filter-out $(BUILD)/main.o,$(USER_OBJS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
# Workloads the integration tests run inside test cgroups.
PROG_SRCS := $(wildcard tests/programs/*.c)
PROG_BINS := $(patsubst tests/programs/%.c,$(BUILD)/tests/bin/%,$(PROG_SRCS))

.PHONY: all deps check unit integration golden golden-update clean install uninstall
all: $(BUILD)/memprobe $(BUILD)/memprobe.bash

# Install what is missing (the script is idempotent and quiet when all is
# there): what building needs for make and make demo; with what only the
# tests use (Prometheus, Chromium, QEMU, ...) for check, vmtest, fuzz, soak.
$(BUILD)/.deps: scripts/deps.sh
	@mkdir -p $(BUILD)
	@scripts/deps.sh
	@touch $@
$(BUILD)/.deps-tests: scripts/deps.sh | $(BUILD)/.deps
	@scripts/deps.sh --tests
	@touch $@
deps: $(BUILD)/.deps
deps-tests: $(BUILD)/.deps-tests
.PHONY: deps-tests

$(BUILD)/memprobe.bpf.o: bpf/memprobe.bpf.c $(wildcard bpf/*.h) vmlinux/vmlinux.h | $(BUILD)/.deps
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/memprobe.skel.h: $(BUILD)/memprobe.bpf.o
	$(BPFTOOL) gen skeleton $< name memprobe_bpf > $@

$(BUILD)/%.o: user/%.c $(wildcard user/*.h) $(wildcard bpf/*.h) $(BUILD)/memprobe.skel.h \
		$(CJSON_DIR)/.complete
	$(CC) $(ALL_CFLAGS) -c $< -o $@

# Debian's cjson source, patched (scripts/cjson.sh: apt-get source through a
# private apt state; the network once, then this cache until make clean).
$(CJSON_DIR)/.complete: | $(BUILD)/.deps
	@scripts/cjson.sh $(CJSON_DIR)

# cJSON.c is not memprobe's code: compiled with the user's CFLAGS (and the
# sanitizers, so that ASan sees its accesses too), not with -Werror.
$(CJSON_LIB): $(CJSON_DIR)/.complete
	@mkdir -p $(BUILD)/lib
	$(CC) $(CFLAGS) $(SAN_FLAGS) -c $(CJSON_DIR)/src/cJSON.c -o $(BUILD)/lib/cJSON.o
	$(AR) rcs $@ $(BUILD)/lib/cJSON.o

$(BUILD)/version: FORCE
	@mkdir -p $(BUILD)
	@echo '$(MP_VERSION)' | cmp -s - $@ || echo '$(MP_VERSION)' > $@
$(VERSION_OBJS): $(BUILD)/version
.PHONY: FORCE

$(BUILD)/memprobe: $(USER_OBJS) $(CJSON_LIB)
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) $(USER_OBJS) -o $@ $(MEMPROBE_LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c tests/unit/unit.h $(LIB_OBJS) $(CJSON_LIB)
	@mkdir -p $(BUILD)/tests
	$(CC) $(ALL_CFLAGS) $(LDFLAGS) -DFIXTURES=\"$(CURDIR)/tests/fixtures\" -Itests/unit $< $(LIB_OBJS) -o $@ $(LDLIBS)

# The workloads are never sanitized: the tests check memprobe's figures
# against what a workload holds, and ASan's runtime charges MiBs of its own
# (shadow, allocator) and turns mlock() into a no-op.
$(BUILD)/tests/bin/%: tests/programs/%.c $(wildcard tests/programs/*.h)
	@mkdir -p $(BUILD)/tests/bin
	$(CC) $(MP_CFLAGS) $(CFLAGS) $(LDFLAGS) -pthread $< -o $@

unit: $(UNIT_BINS) $(BUILD)/memprobe | $(BUILD)/.deps-tests
	@MEMPROBE=$(CURDIR)/$(BUILD)/memprobe tests/run-unit.sh $(UNIT_BINS) tests/golden.sh

# Every renderer of every saved document against tests/fixtures/golden/
# (tests/golden.sh, no root; make unit and make check run it too);
# golden-update writes the expected outputs anew from this build.
golden: $(BUILD)/memprobe
	@MEMPROBE=$(CURDIR)/$(BUILD)/memprobe tests/golden.sh
golden-update: $(BUILD)/memprobe
	@MEMPROBE=$(CURDIR)/$(BUILD)/memprobe tests/golden.sh --update

# The tests run what this build made (build/ or, with SANITIZE=1, build/san/).
TEST_ENV := MEMPROBE=$(CURDIR)/$(BUILD)/memprobe MEMPROBE_TEST_BIN=$(CURDIR)/$(BUILD)/tests/bin \
	    MEMPROBE_UNIT_DIR=$(CURDIR)/$(BUILD)/tests
# Under ASan memset checks its range by reading the shadow memory, 1/8 of
# it: the probe's fill would fault in one shadow page per 8 it fills and
# the tests' faults = allocated / 4 KiB would be 12.5% off. replace_intrin=0
# leaves memset, memcpy and memmove unchecked (loads, stores, the heap and
# leaks still are).
ifeq ($(SANITIZE),1)
TEST_ENV += MEMPROBE_STATIC=0
TEST_ENV += ASAN_OPTIONS=replace_intrin=0:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
endif

integration: $(BUILD)/memprobe $(PROG_BINS) | $(BUILD)/.deps-tests
	@$(TEST_ENV) tests/run-integration.sh

# The README's test command. Needs root (real cgroups, real BPF).
check: $(BUILD)/memprobe $(UNIT_BINS) $(PROG_BINS) | $(BUILD)/.deps-tests
	@$(TEST_ENV) tests/run-all.sh

clean:
	rm -rf build

# The bash completion, generated from the binary's own --help and its
# messages for a bad --format and --thp (scripts/completion.sh): it follows
# the command and option tables with no list kept by hand.
$(BUILD)/memprobe.bash: $(BUILD)/memprobe scripts/completion.sh
	scripts/completion.sh $(BUILD)/memprobe > $@.tmp && mv $@.tmp $@

# make install [PREFIX=/usr/local] [DESTDIR=]: the static binary into sbin
# (it needs root), the man page, the bash completion; make uninstall removes
# the three. The SANITIZE=1 build is for the tests, not for installing.
PREFIX  ?= /usr/local
INSTALL ?= install
INSTALLED := $(DESTDIR)$(PREFIX)/sbin/memprobe $(DESTDIR)$(PREFIX)/share/man/man8/memprobe.8 \
	     $(DESTDIR)$(PREFIX)/share/bash-completion/completions/memprobe
install: $(BUILD)/memprobe $(BUILD)/memprobe.bash docs/memprobe.8
ifeq ($(SANITIZE),1)
	$(error make install installs the static memprobe: run it without SANITIZE=1)
endif
	$(INSTALL) -D -m 0755 $(BUILD)/memprobe $(DESTDIR)$(PREFIX)/sbin/memprobe
	$(INSTALL) -D -m 0644 docs/memprobe.8 $(DESTDIR)$(PREFIX)/share/man/man8/memprobe.8
	$(INSTALL) -D -m 0644 $(BUILD)/memprobe.bash \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/memprobe

uninstall:
	rm -f $(INSTALLED)

# The README's first command: the probe on its built-in default, a 1 GiB
# stand-in container made under memprobe's own cgroup. Needs root.
demo: $(BUILD)/memprobe
	$(BUILD)/memprobe probe
.PHONY: demo

# The kernel matrix (issue 4): boot build/memprobe on Debian kernels under
# QEMU (TCG) and run tests/vm/payload.sh in each; one line per kernel, the
# reports in build/vmtest/KERNEL/. Needs root. See scripts/vm/vmtest.sh.
KERNELS ?= 5.10 6.1 6.12 7.2 7.3
vmtest: $(BUILD)/memprobe $(PROG_BINS) | $(BUILD)/.deps-tests
	scripts/vm/vmtest.sh $(KERNELS)
.PHONY: vmtest

# The side-by-side bench (issue 5; bench/run.py, docs/performance.md): memprobe
# against no tracer, empty BPF programs, bpftrace and perf kmem (with each
# one's floor from its hook firings per page), its BPF run time per event, its
# start-up time and the probe's fill rate. Needs root; about 10 minutes.
BENCH_BINS := $(BUILD)/bench/fill $(BUILD)/bench/bpfstats $(BUILD)/bench/empty.bpf.o

$(BUILD)/bench/.deps: bench/deps.sh
	@mkdir -p $(BUILD)/bench
	@bench/deps.sh
	@touch $@

$(BUILD)/bench/fill: bench/fill.c | $(BUILD)/bench/.deps
	$(CC) $(ALL_CFLAGS) -pthread $< -o $@

$(BUILD)/bench/bpfstats: bench/bpfstats.c | $(BUILD)/bench/.deps $(BUILD)/.deps
	$(CC) $(ALL_CFLAGS) $< -o $@ -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic

$(BUILD)/bench/empty.bpf.o: bench/empty.bpf.c vmlinux/vmlinux.h | $(BUILD)/bench/.deps $(BUILD)/.deps
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

bench: $(BUILD)/memprobe $(BENCH_BINS)
	/usr/bin/python3 bench/run.py
.PHONY: bench

# The scale bench (bench/scale.sh, issue 14): memprobe record of a cgroup of
# 1000 processes and 10 000 threads (bench/swarm.c) for 10 minutes, its own
# memory and the maps' fill sampled. Needs root; SCALE_SECONDS (600).
# About 14 minutes (SCALE_HOUR: 3 of them, an hour of timeline at 5 ms).
$(BUILD)/bench/swarm: bench/swarm.c
	@mkdir -p $(BUILD)/bench
	$(CC) $(ALL_CFLAGS) -pthread $< -o $@

# mapstat reads memprobe's maps from outside (entries, events lost so far).
$(BUILD)/bench/mapstat: bench/mapstat.c bpf/memprobe.h | $(BUILD)/.deps
	@mkdir -p $(BUILD)/bench
	$(CC) $(ALL_CFLAGS) $< -o $@ -Wl,-Bstatic -lbpf -lelf -lz -Wl,-Bdynamic

scale: $(BUILD)/memprobe $(BUILD)/bench/swarm $(BUILD)/bench/mapstat
	bench/scale.sh
.PHONY: scale

# The soak (tests/soak.sh, docs/testing.md): 20 probes in a row of 1 GiB test
# cgroups that a workload fills to 60%..95% and keeps growing through the
# probe. Needs root; about 20 seconds. Not part of make check.
soak: $(BUILD)/memprobe $(PROG_BINS) | $(BUILD)/.deps-tests
	@tests/soak.sh
.PHONY: soak

# The loader's fuzz target (tests/fuzz/fuzz_doc.c, docs/testing.md):
# libFuzzer with ASan and UBSan, every user/ file but main.c built with
# clang into build/fuzz/ (coverage of the loader, the renderers and
# compare), run FUZZ_SECONDS on tests/fuzz/corpus/ (new inputs it finds go
# to build/fuzz/corpus/, the seeds stay as they are). Crashes are written
# to build/fuzz/ (crash-*): each is a fault to fix and a test to add.
FUZZ_SECONDS ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
# clang warns of what gcc does not: {"x"} leaving later members zero
FUZZ_CFLAGS := $(filter-out -I$(BUILD),$(MP_CFLAGS)) -Ibuild -Wno-missing-field-initializers \
	       -g -O1 $(FUZZ_SAN)
FUZZ_OBJS := $(patsubst user/%.c,build/fuzz/%.o,$(filter-out user/main.c,$(USER_SRCS)))

build/fuzz/%.o: user/%.c $(wildcard user/*.h) $(wildcard bpf/*.h) build/memprobe.skel.h
	@mkdir -p build/fuzz
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

# (libFuzzer's runtime: libclang-rt-14-dev, a test package)
build/fuzz/fuzz_doc: tests/fuzz/fuzz_doc.c $(FUZZ_OBJS) $(CJSON_LIB) | $(BUILD)/.deps-tests
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(filter-out $(CJSON_LIB),$^) -o $@ $(LDLIBS)

fuzz: build/fuzz/fuzz_doc
	@mkdir -p build/fuzz/corpus
	cd build/fuzz && ./fuzz_doc -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 corpus $(CURDIR)/tests/fuzz/corpus
.PHONY: fuzz
