#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Report of tools/testing/bench/icount.sh: guest instructions per send.

usage: icount-report.py DIR GUESTS KIND...

DIR holds, for each KIND and guest I (1..GUESTS), KIND.I.counts (the
plugin's blocks: address, instructions, runs on vCPU 0, vCPU 1 and any
others, time samples on vCPU 0 and vCPU 1; the PAUSE counts, the samples
taken and the window's host nanoseconds), KIND.I/kallsyms (the guest's symbols, mpa.ko's
included) and KIND.I/run.txt (mpabench's "icount:" line with the sends
and octets of the window).
"""

import bisect
import collections
import re
import statistics
import sys

KERNEL = 0xffff800000000000
TOP = 25
# where a vCPU with nothing to do sits (its samples are not busy time)
IDLE = {'default_idle', 'pv_native_safe_halt', 'native_safe_halt',
        'default_idle_call', 'cpu_idle_poll', 'do_idle', 'arch_cpu_idle',
        'acpi_safe_halt', 'acpi_idle_do_entry'}


def symbols(path):
    """Text symbols of a /proc/kallsyms, sorted: (addresses, names)."""
    syms = []
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) < 3 or p[1] not in 'tTwW' or int(p[0], 16) == 0:
                continue
            syms.append((int(p[0], 16), ' '.join(p[2:])))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


class Guest:
    """One guest's window: instructions by vCPU and function, and its sends."""

    def __init__(self, top, name):
        addrs, names = symbols(f'{top}/{name}/kallsyms')
        # vCPU 0, vCPU 1, any others
        self.funcs = [collections.Counter() for _ in range(3)]
        # time samples, vCPU 0 and vCPU 1
        self.samples = [collections.Counter() for _ in range(2)]
        self.pauses = [0, 0, 0]
        self.tick_ns = 0
        marks = None
        with open(f'{top}/{name}.counts') as f:
            for line in f:
                if line.startswith('# marks'):
                    marks = int(line.split()[2])
                    continue
                if line.startswith('# pauses'):
                    self.pauses = [int(x) for x in line.split()[2:5]]
                    continue
                if line.startswith('# ticks'):
                    ticks, ns = (int(x) for x in line.split()[2:4])
                    self.tick_ns = ns / ticks if ticks else 0
                    continue
                vaddr, insns, *runs = line.split()
                runs, samples = runs[:3], runs[3:5]
                vaddr = int(vaddr, 16)
                if vaddr < KERNEL:
                    func = '[user space]'
                else:
                    i = bisect.bisect_right(addrs, vaddr) - 1
                    func = names[i] if i >= 0 else '[unknown]'
                for cpu, n in enumerate(runs):
                    self.funcs[cpu][func] += int(insns) * int(n)
                for cpu, n in enumerate(samples):
                    self.samples[cpu][func] += int(n)
        if marks != 2:
            sys.exit(f'icount: {name}: the window was not closed '
                     f'({marks} marks)')
        with open(f'{top}/{name}/run.txt') as f:
            m = re.search(r'icount: \S+, \d+ transfers, (\d+) sends, '
                          r'(\d+) octets', f.read())
        if not m:
            sys.exit(f'icount: {name}: no icount line in its run.txt')
        self.sends, self.octets = int(m.group(1)), int(m.group(2))
        self.insns = [sum(c.values()) for c in self.funcs]
        self.busy = [sum(n for f, n in c.items() if f not in IDLE)
                     for c in self.samples]

    def ns_per_send(self, cpu, func=None):
        """Host time per send on vCPU @cpu: busy, or in @func."""
        n = self.busy[cpu] if func is None else self.samples[cpu][func]
        return n * self.tick_ns / self.sends

    def per_octet(self, cpu):
        """Instructions per octet moved on vCPU @cpu (None: all vCPUs)."""
        n = sum(self.insns) if cpu is None else self.insns[cpu]
        return n / self.octets


def med(values):
    return statistics.median(values)


def main():
    top, guests, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    data = {k: [Guest(top, f'{k}.{i}') for i in range(1, guests + 1)]
            for k in kinds}
    print('== icount: guest instructions per send, median over '
          f'{guests} guests (veth, one way, no CRC;')
    print('vCPU 0 runs the writer, vCPU 1 the reader, total: all vCPUs;')
    print('PAUSE: spin-wait instructions per send, vCPU 0 / vCPU 1; per send:')
    print('TCP sends -S octets (1448 for the MULPDU cell), MPA the ULPDU;')
    print('x TCP: per octet moved, against the median of the tcp guests)')
    print(f'  {"kind":8s} {"vCPU 0":>8s} {"vCPU 1":>8s} {"total":>8s} '
          f'{"PAUSE":>11s} {"vCPU 0 x TCP":>13s} {"total x TCP":>12s}')
    base = data.get('tcp')
    for k in kinds:
        gs = data[k]
        line = (f'  {k:8s} '
                f'{med([g.insns[0] / g.sends for g in gs]):8.0f} '
                f'{med([g.insns[1] / g.sends for g in gs]):8.0f} '
                f'{med([sum(g.insns) / g.sends for g in gs]):8.0f} '
                f'{med([g.pauses[0] / g.sends for g in gs]):5.2f}/'
                f'{med([g.pauses[1] / g.sends for g in gs]):5.2f}')
        if base and k != 'tcp':
            for cpu in (0, None):
                ratio = (med([g.per_octet(cpu) for g in gs]) /
                         med([g.per_octet(cpu) for g in base]))
                line += f' {ratio:{13 if cpu == 0 else 12}.3f}'
        print(line)
        for g in gs if guests > 1 else []:
            print(f'  {"":8s} {g.insns[0] / g.sends:8.0f} '
                  f'{g.insns[1] / g.sends:8.0f} '
                  f'{sum(g.insns) / g.sends:8.0f} '
                  f'{g.pauses[0] / g.sends:5.2f}/{g.pauses[1] / g.sends:5.2f}')
    if base and all(g.tick_ns and g.busy[0] for k in kinds
                    for g in data[k]):
        times(data, kinds, base)
    elif base:
        print('\n(no time samples in every guest\'s counts: the time '
              'section is left out)')
    if not base:
        return
    for k in kinds:
        if k == 'tcp':
            continue
        # all guests of a kind together: instructions per send
        a, b = collections.Counter(), collections.Counter()
        for g in base:
            a.update(g.funcs[0])
        for g in data[k]:
            b.update(g.funcs[0])
        na = sum(g.sends for g in base)
        nb = sum(g.sends for g in data[k])
        print(f'\n== vCPU 0 (the writer\'s), {k} against tcp, all guests: '
              'instructions per send')
        print('(per send as above), the largest differences')
        differences(k, set(a) | set(b), lambda f: a[f] / na,
                    lambda f: b[f] / nb, 1)


def differences(kind, funcs, tcp, other, digits):
    """The functions where @other(f) differs most from @tcp(f)."""
    diff = {f: other(f) - tcp(f) for f in funcs}
    order = sorted(diff, key=lambda f: -diff[f])
    print(f'  {"function":44s} {"tcp":>8s} {kind:>8s} {"diff":>8s}')
    for f in order[:TOP] + ['...'] + order[-(TOP // 2):]:
        if f == '...':
            print('  ...')
            continue
        print(f'  {f[:44]:44s} {tcp(f):8.{digits}f} {other(f):8.{digits}f} '
              f'{diff[f]:+8.{digits}f}')


def times(data, kinds, base):
    """The samples: where each vCPU's busy (not idle) time went."""
    print('\n== time: host microseconds per send each vCPU was busy (not '
          'idle), from the')
    print('samples, median over the guests; x TCP: per octet moved, as '
          'above. These move')
    print('with the host\'s speed from guest to guest; the shares below '
          'do not')
    print(f'  {"kind":8s} {"vCPU 0":>8s} {"vCPU 1":>8s} {"vCPU 0 x TCP":>13s}'
          f' {"vCPU 1 x TCP":>13s}')

    def per_octet(g, cpu):
        return g.ns_per_send(cpu) * g.sends / g.octets

    for k in kinds:
        gs = data[k]
        line = (f'  {k:8s} {med([g.ns_per_send(0) for g in gs]) / 1e3:8.2f} '
                f'{med([g.ns_per_send(1) for g in gs]) / 1e3:8.2f}')
        if k != 'tcp':
            for cpu in (0, 1):
                ratio = (med([per_octet(g, cpu) for g in gs]) /
                         med([per_octet(g, cpu) for g in base]))
                line += f' {ratio:13.3f}'
        print(line)

    def share(gs, f):
        return med([100 * g.samples[0][f] / g.busy[0] for g in gs])

    for k in kinds:
        if k == 'tcp':
            continue
        fs = set()
        for g in base + data[k]:
            fs |= set(g.samples[0])
        print(f'\n== time on vCPU 0 (the writer\'s), {k} against tcp: '
              'share of its busy time')
        print('(%), median over the guests, the largest differences')
        differences(k, fs - IDLE, lambda f: share(base, f),
                    lambda f, gs=data[k]: share(gs, f), 2)

if __name__ == '__main__':
    main()
