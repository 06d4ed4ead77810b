# SPDX-License-Identifier: GPL-2.0
#
# mpa: MPA (RFC 5044) as a Linux TCP upper layer protocol.
#
#   make             build mpa/mpa.ko (and samples/mpa/mpa_echo.ko) against KDIR
#   make demo        build, boot a guest, show MPA at work (mpacat, tshark)
#   make mpacat      build mpacat, netcat for MPA sockets
#   make check       every test: static checks, fuzzing, KUnit, selftests
#   make help        all targets

# The running kernel's build tree if there is one, else Debian's 6.12 headers.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-6.12.*+deb12-amd64))))

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(TOP)/.build
T := $(TOP)/tools/testing
LANE ?= stock

SOURCES := Kbuild mpa include samples

.PHONY: all modules clean check demo deps fuzz shell static selftests bench \
	mpacat modules-stock modules-debug help

all: modules

modules:
	@test -n "$(KDIR)" || { echo "mpa: no kernel build tree: install linux-headers-6.12 or set KDIR (make deps)"; exit 1; }
	$(MAKE) -C $(KDIR) M=$(TOP) modules

# Per-lane builds happen in copies of the sources under .build/<lane>/, as
# kbuild (6.12) writes its output next to the sources of an external module.
modules-stock modules-debug: modules-%:
	@eval "$$($(T)/lane.sh $*)" && \
	mkdir -p $(BUILD)/$* && \
	cp -a --parents $(SOURCES) $(BUILD)/$*/ && \
	$(MAKE) -s -C "$$LANE_KDIR" M=$(BUILD)/$* W=1 modules

# Test programs (kselftest harness from Debian's linux-source-6.12).
selftests:
	@$(MAKE) -s -C $(T)/selftests/net/mpa \
		KSFT_DIR="$$($(T)/srctree.sh)/tools/testing/selftests" \
		OUTPUT=$(BUILD)/selftests TOP=$(TOP)

# mpacat, netcat for MPA sockets (tools/mpacat/), into .build/mpacat/.
mpacat:
	@$(MAKE) -s -C $(TOP)/tools/mpacat OUTPUT=$(BUILD)/mpacat TOP=$(TOP)

deps:
	@$(T)/deps.sh

# deps first: mpacat needs the compiler it installs on a fresh machine.
check: deps mpacat
	@$(T)/check.sh

demo:
	@$(T)/demo.sh

# MPA sockets against plain TCP, ratios measured in one stock guest
bench:
	@$(T)/bench.sh

fuzz:
	@$(MAKE) -s -C $(T)/fuzz fuzz-long

static:
	@$(T)/static.sh

# An interactive shell in a guest: make shell [LANE=debug]
shell:
	@$(T)/vm/run --lane $(LANE) --shell

clean:
	$(MAKE) -C $(KDIR) M=$(TOP) clean 2>/dev/null || true
	rm -rf $(BUILD)
	-@$(MAKE) -s -C $(T)/fuzz clean
	-@$(MAKE) -s -C $(TOP)/tools/mpacat clean

help:
	@echo "make [KDIR=...]      build mpa/mpa.ko (KDIR: $(KDIR))"
	@echo "make demo            boot a stock-kernel guest, exchange ULPDUs with mpacat over veth,"
	@echo "                     capture them and check tshark's decode (Good CRC32)"
	@echo "make mpacat          build tools/mpacat (netcat for MPA) into .build/mpacat/"
	@echo "make check           every test; one 'LABEL: N passed, N failed' line per suite"
	@echo "make static          checkpatch --strict, kernel-doc and sparse"
	@echo "make bench           MPA sockets' throughput against plain TCP (ratios, one guest)"
	@echo "make fuzz            a longer libFuzzer run over the protocol core"
	@echo "make shell [LANE=stock|debug]   a shell in a test guest"
	@echo "make deps            install what the build and the tests need (apt-get)"
	@echo "make clean"
	@echo "tools/testing/vm/run --help      run any command in a test guest"
