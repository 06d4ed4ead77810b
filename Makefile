# SPDX-License-Identifier: GPL-2.0
#
# mpa: MPA (RFC 5044) as a Linux TCP upper layer protocol.
#
#   make             build mpa/mpa.ko (and samples/mpa/mpa_echo.ko) against KDIR
#   make demo        build, boot a guest, show MPA at work (mpacat, tshark)
#   make mpacat      build mpacat, netcat for MPA sockets
#   make check       every test: static checks, fuzzing, KUnit, selftests
#   make install     install mpa.ko for KDIR's kernel, mpacat, mpactl, man pages
#   make deb         Debian packages mpa-dkms and mpa-tools, into .build/deb/
#   make help        all targets

# The running kernel's build tree if there is one, else Debian's 6.12 headers.
KDIR ?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	$(lastword $(sort $(wildcard /usr/src/linux-headers-6.12.*+deb12-amd64))))

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD := $(TOP)/.build
T := $(TOP)/tools/testing
LANE ?= stock

SOURCES := Kbuild mpa include samples

# make install: the module goes to /lib/modules/KVER/updates/ (KVER: the
# release of KDIR's kernel), the tools to PREFIX/sbin, their data (the
# netlink spec, YNL's library) to PREFIX/share/mpa, where an installed
# mpactl looks; everything under DESTDIR if given (then no depmod).
KVER ?= $(or $(shell cat $(KDIR)/include/config/kernel.release 2>/dev/null),$(shell uname -r))
PREFIX ?= /usr/local
SBINDIR := $(PREFIX)/sbin
DATADIR := $(PREFIX)/share/mpa
MANDIR ?= $(PREFIX)/share/man
MODDIR := /lib/modules/$(KVER)/updates
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(TOP)/dkms.conf)
DKMS_SRC := /usr/src/mpa-$(VERSION)

.PHONY: all modules clean check demo deps fuzz shell static selftests bench \
	mpacat modules-stock modules-debug help install install-module \
	install-tools install-dkms uninstall deb

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

install: install-module install-tools

install-module: modules
	@v=$$(modinfo -F vermagic $(TOP)/mpa/mpa.ko | cut -d' ' -f1); \
	[ "$$v" = "$(KVER)" ] || { echo "mpa: mpa.ko is built for $$v, not KVER=$(KVER) (set KDIR)"; exit 1; }
	install -D -m 0644 $(TOP)/mpa/mpa.ko $(DESTDIR)$(MODDIR)/mpa.ko
	$(if $(DESTDIR),@echo "mpa: DESTDIR set: run depmod $(KVER) on the target",depmod -a $(KVER))

install-tools: mpacat
	install -D -m 0755 $(BUILD)/mpacat/mpacat $(DESTDIR)$(SBINDIR)/mpacat
	install -D -m 0755 $(TOP)/tools/mpactl/mpactl $(DESTDIR)$(SBINDIR)/mpactl
	install -D -m 0644 $(TOP)/tools/mpacat/mpacat.8 $(DESTDIR)$(MANDIR)/man8/mpacat.8
	install -D -m 0644 $(TOP)/tools/mpactl/mpactl.8 $(DESTDIR)$(MANDIR)/man8/mpactl.8
	install -D -m 0644 $(TOP)/Documentation/netlink/specs/mpa.yaml $(DESTDIR)$(DATADIR)/mpa.yaml
	$(TOP)/tools/packaging/ynl-lib.sh $(DESTDIR)$(DATADIR)/ynl

# The module's source and dkms.conf for DKMS (then: dkms install mpa/VERSION)
install-dkms:
	@if [ -z "$(DESTDIR)" ] && dpkg -S $(DKMS_SRC) > /dev/null 2>&1; then \
		echo "mpa: $(DKMS_SRC) belongs to the mpa-dkms package"; exit 1; fi
	install -d $(DESTDIR)$(DKMS_SRC)
	install -m 0644 $(TOP)/dkms.conf $(DESTDIR)$(DKMS_SRC)/
	cd $(TOP) && find mpa include \( -name '*.[ch]' -o -name Kbuild \) \
		-exec install -D -m 0644 {} $(DESTDIR)$(DKMS_SRC)/{} \;

uninstall:
	rm -f $(DESTDIR)$(MODDIR)/mpa.ko
	@rmdir $(DESTDIR)$(MODDIR) 2> /dev/null || true
	$(if $(DESTDIR),,depmod -a $(KVER))
	rm -f $(DESTDIR)$(SBINDIR)/mpacat $(DESTDIR)$(SBINDIR)/mpactl
	rm -f $(DESTDIR)$(MANDIR)/man8/mpacat.8 $(DESTDIR)$(MANDIR)/man8/mpactl.8
	@rmdir $(DESTDIR)$(MANDIR)/man8 2> /dev/null || true
	rm -rf $(DESTDIR)$(DATADIR)
	@if [ -z "$(DESTDIR)" ] && dpkg -S $(DKMS_SRC) > /dev/null 2>&1; then \
		echo "mpa: $(DKMS_SRC) belongs to the mpa-dkms package: left alone"; \
	else \
		if [ -z "$(DESTDIR)" ] && [ -n "$$(dkms status mpa/$(VERSION) 2> /dev/null)" ]; then \
			echo "dkms remove mpa/$(VERSION) --all"; dkms remove mpa/$(VERSION) --all; \
		fi; \
		echo "rm -rf $(DESTDIR)$(DKMS_SRC)"; rm -rf $(DESTDIR)$(DKMS_SRC); \
	fi

# Debian packages (dpkg-buildpackage): mpa-dkms, mpa-tools, into .build/deb/
deb:
	@$(T)/deps.sh deb
	@$(TOP)/tools/packaging/deb.sh $(BUILD)/deb

# deps first: mpacat needs the compiler it installs on a fresh machine.
check: deps mpacat
	@$(T)/check.sh

demo:
	@$(T)/demo.sh

# MPA sockets against plain TCP, ratios measured in one stock guest
bench:
	@$(T)/bench/bench.sh

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
	@echo "make install [KDIR=... PREFIX=/usr/local DESTDIR=]"
	@echo "                     mpa.ko into /lib/modules/KVER/updates/ (KVER: KDIR's, $(KVER)),"
	@echo "                     depmod; mpacat, mpactl into PREFIX/sbin, man pages, PREFIX/share/mpa"
	@echo "make install-dkms    the module's source for DKMS into /usr/src/mpa-$(VERSION)/"
	@echo "make uninstall       remove what make install and make install-dkms installed"
	@echo "make deb             Debian packages mpa-dkms and mpa-tools into .build/deb/"
	@echo "make deps            install what the build and the tests need (apt-get)"
	@echo "make clean"
	@echo "tools/testing/vm/run --help      run any command in a test guest"
