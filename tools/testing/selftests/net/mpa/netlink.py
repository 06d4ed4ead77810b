#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# The "mpa" generic netlink family (Documentation/netlink/specs/mpa.yaml)
# and /proc/net/mpa_stat, end to end: the policy and who may change it,
# the connection dump, the events and the statistics, through the kernel's
# YNL library, its cli.py and tools/mpactl/mpactl. MPA connections are made
# here from Python (TCP_ULP "mpa", SOL_MPA options), by raw TCP peers that
# speak MPA badly on purpose, and by samples/mpa/mpa_echo (kernel ones).
#
# Runs as root in a test guest with mpa loaded (tools/testing/netlink-suite.sh);
# prints TAP and exits non-zero if a test failed. Each test works in network
# namespaces of its own and removes them, closes its sockets and restores
# any policy it changed.
#
# Environment: MPA_SRCTREE, the kernel source tree with tools/net/ynl
# (default: what tools/testing/srctree.sh prints).

import ast
import ctypes
import errno
import ipaddress
import json
import os
import pprint
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, '..', '..', '..', '..', '..'))
SPEC = os.path.join(TOP, 'Documentation', 'netlink', 'specs', 'mpa.yaml')
MPACTL = os.path.join(TOP, 'tools', 'mpactl', 'mpactl')
MPACTL_READY = 'mpactl: monitoring events'   # monitor's line once subscribed
PY = '/usr/bin/python3'


def srctree():
    if os.environ.get('MPA_SRCTREE'):
        return os.environ['MPA_SRCTREE']
    return subprocess.run([os.path.join(TOP, 'tools', 'testing', 'srctree.sh')],
                          capture_output=True, text=True,
                          check=True).stdout.strip()


KSRC = srctree()
YNL = os.path.join(KSRC, 'tools', 'net', 'ynl')
CLI = os.path.join(YNL, 'cli.py')
# genetlink-legacy: the 6.12 schema of plain genetlink has no uns-admin-perm
SCHEMA = os.path.join(KSRC, 'Documentation', 'netlink', 'genetlink-legacy.yaml')
NLCTRL = os.path.join(KSRC, 'Documentation', 'netlink', 'specs', 'nlctrl.yaml')
sys.path.insert(0, YNL)
from lib import YnlFamily, NlError  # noqa: E402 pylint: disable=wrong-import-position

# include/uapi/linux/mpa.h
TCP_ULP = 31
SOL_MPA = 0x4d5041
(MPA_ROLE, MPA_MARKERS, MPA_CRC, MPA_REVISION, MPA_PERMISSIVE, MPA_ENHANCED,
 MPA_PRIVATE_DATA, MPA_TIMEOUT, MPA_START, MPA_PEER_FRAME,
 MPA_PEER_PRIVATE_DATA, MPA_ACCEPT, MPA_REJECT, MPA_STATE, MPA_RESULT,
 MPA_ERROR, MPA_STATS) = range(1, 18)
MPA_ROLE_INITIATOR, MPA_ROLE_RESPONDER = 1, 2
MPA_RESULT_TX_MARKERS, MPA_RESULT_RX_MARKERS, MPA_RESULT_CRC = 1, 2, 4
MPA_ENH_PEER_TO_PEER = 1
MPA_STATE_FULL, MPA_STATE_REJECTED, MPA_STATE_FAILED = 5, 6, 7

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
PR_SET_DUMPABLE = 4
NOBODY = 65534

libc = ctypes.CDLL(None, use_errno=True)

DEFAULT_POLICY = {'crc-off-allowed': 0, 'markers': 0, 'initiator-rev': 1,
                  'responder-revs': {'rev1', 'rev2'}, 'permissive': 0,
                  'timeout-ms': 10000}
COUNTERS = ('tx-fpdus', 'tx-octets', 'rx-fpdus', 'rx-octets', 'tx-markers',
            'rx-markers', 'crc-errors', 'marker-errors')
STATS_KEYS = ('conns-streaming', 'conns-startup', 'conns-full',
              'conns-rejected', 'conns-failed', 'attached', 'established',
              'rejected', 'startup-failed') + COUNTERS
# /proc/net/mpa_stat names of the startup failure reasons
PROC_REASONS = ('BadKey', 'InitInit', 'ReplyAtResponder', 'PdTooLong',
                'V2Short', 'BadRev', 'Rev0', 'RevMismatch', 'V2Mismatch',
                'P2pMismatch', 'NoRtr', 'RtrMismatch', 'PdBuffer',
                'Truncated', 'Timeout', 'PeerClosed', 'EarlyData')


class Fail(Exception):
    pass


def diag(text):
    for line in str(text).splitlines():
        print('# ' + line, flush=True)


def check(cond, what):
    if not cond:
        raise Fail(what)


def eq(got, want, what):
    if got != want:
        raise Fail(f'{what}:\n  got  {got!r}\n  want {want!r}')


def oserr(e, code, what):
    """Expect OSError @e to carry errno @code."""
    if not isinstance(e, OSError) or e.errno != code:
        raise Fail(f'{what}: got {e!r}, want {errno.errorcode[code]}')


# --- namespaces ------------------------------------------------------------

def sys_setns(fd, nstype):
    if libc.setns(fd, nstype) != 0:
        e = ctypes.get_errno()
        raise OSError(e, 'setns: ' + os.strerror(e))


def sys_unshare(flags):
    if libc.unshare(flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, 'unshare: ' + os.strerror(e))


def sh(*cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise Fail(f'{" ".join(cmd)}: exit {r.returncode}: {r.stderr.strip()}')
    return r.stdout


class Netns:
    """A named network namespace (ip netns), loopback up."""
    seq = 0

    def __init__(self):
        Netns.seq += 1
        self.name = f'mpanl-{os.getpid()}-{Netns.seq}'
        sh('ip', 'netns', 'add', self.name)
        sh('ip', '-n', self.name, 'link', 'set', 'lo', 'up')
        self.path = f'/run/netns/{self.name}'

    def __enter__(self):
        self._saved = os.open('/proc/thread-self/ns/net', os.O_RDONLY)
        fd = os.open(self.path, os.O_RDONLY)
        try:
            sys_setns(fd, CLONE_NEWNET)
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc):
        sys_setns(self._saved, CLONE_NEWNET)
        os.close(self._saved)

    def delete(self):
        sh('ip', 'netns', 'del', self.name)


class InitNs:
    """The namespace the suite started in, as a context like Netns."""
    name = 'init'

    def __enter__(self):
        self._saved = os.open('/proc/thread-self/ns/net', os.O_RDONLY)
        sys_setns(INIT_NS_FD, CLONE_NEWNET)
        return self

    def __exit__(self, *exc):
        sys_setns(self._saved, CLONE_NEWNET)
        os.close(self._saved)


INIT_NS_FD = os.open('/proc/self/ns/net', os.O_RDONLY)
INIT = InitNs()


class HereNs:
    """Whatever namespace we are in (for a child without CAP_SYS_ADMIN)."""
    name = 'here'

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass


HERE_NS = HereNs()


class T:
    """One test's resources, released in reverse order when it ends."""

    def __init__(self):
        self.undo = []

    def later(self, fn, *a):
        self.undo.append((fn, a))

    def cleanup(self):
        errs = []
        while self.undo:
            fn, a = self.undo.pop()
            try:
                fn(*a)
            except Exception as e:  # pylint: disable=broad-except
                errs.append(f'cleanup {getattr(fn, "__name__", fn)}: {e!r}')
        return errs

    def netns(self):
        ns = Netns()
        self.later(ns.delete)
        return ns

    def veth(self, a, b, v4=('10.77.0.1', '10.77.0.2'),
             v6=('fd77::1', 'fd77::2')):
        """Join netns @a and @b with a veth pair; addresses v4 and v6."""
        sh('ip', 'link', 'add', 'va', 'netns', a.name, 'type', 'veth',
           'peer', 'name', 'vb', 'netns', b.name)
        for ns, dev, i in ((a, 'va', 0), (b, 'vb', 1)):
            sh('ip', '-n', ns.name, 'addr', 'add', f'{v4[i]}/24', 'dev', dev)
            sh('ip', '-n', ns.name, 'addr', 'add', f'{v6[i]}/64', 'dev', dev,
               'nodad')
            sh('ip', '-n', ns.name, 'link', 'set', dev, 'up')

    def sock(self, s):
        self.later(s.close)
        return s

    def ynl(self, ns=INIT, schema=''):
        with ns:
            fam = YnlFamily(SPEC, schema)
        self.later(fam.sock.close)
        return fam

    def policy_guard(self, fam):
        """Put @fam's namespace's policy back as it is now when done."""
        saved = fam.do('policy-get', {})
        self.later(fam.do, 'policy-set', dict(saved))
        return saved


# --- MPA sockets -----------------------------------------------------------

def set_u32(s, opt, val):
    s.setsockopt(SOL_MPA, opt, struct.pack('I', val))


def get_u32(s, opt):
    return struct.unpack('I', s.getsockopt(SOL_MPA, opt, 4))[0]


def mpa_result(s):
    rev, flags, rtr, role, ird, ord_, mulpdu = struct.unpack(
        'BBBBHHI', s.getsockopt(SOL_MPA, MPA_RESULT, 12))
    return {'rev': rev, 'flags': flags, 'rtr': rtr, 'role': role, 'ird': ird,
            'ord': ord_, 'mulpdu': mulpdu}


def mpa_stats(s):
    v = struct.unpack('10Q', s.getsockopt(SOL_MPA, MPA_STATS, 80))
    return dict(zip(COUNTERS, v[:8]))


def mpa_error(s):
    return struct.unpack('IIi', s.getsockopt(SOL_MPA, MPA_ERROR, 12))


def timeouts(s, sec=60):
    tv = struct.pack('ll', sec, 0)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, tv)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, tv)


def tcp_pair(t, family, ns_c, ns_s, addr):
    """A connected TCP pair: (client in @ns_c, server's end in @ns_s)."""
    with ns_s:
        lst = socket.socket(family, socket.SOCK_STREAM)
        lst.bind((addr, 0))
        lst.listen(1)
    with ns_c:
        c = t.sock(socket.socket(family, socket.SOCK_STREAM))
        c.connect(lst.getsockname()[:2])
    s = t.sock(lst.accept()[0])
    lst.close()
    timeouts(c)
    timeouts(s)
    return c, s


def attach(s, role, markers=None, rev=None, enhanced=None):
    s.setsockopt(socket.IPPROTO_TCP, TCP_ULP, b'mpa')
    set_u32(s, MPA_ROLE, role)
    if markers is not None:
        set_u32(s, MPA_MARKERS, markers)
    if rev is not None:
        set_u32(s, MPA_REVISION, rev)
    if enhanced is not None:
        ird, ord_ = enhanced
        s.setsockopt(SOL_MPA, MPA_ENHANCED, struct.pack('HHBBH', ird, ord_,
                                                        0, 0, 0))


def mpa_start(s):
    s.setsockopt(SOL_MPA, MPA_START, None, 0)


class Conn:
    """Both ends of an MPA connection made here, and what went through."""

    def __init__(self, init, resp, ns_i, ns_r):
        self.i, self.r = init, resp
        self.ns = {init: ns_i, resp: ns_r}
        self.sent = {init: [], resp: []}     # ULPDU sizes, in order

    def peer(self, s):
        return self.r if s is self.i else self.i

    def close(self):
        for s in (self.i, self.r):
            s.close()


def mpa_pair(t, family=socket.AF_INET, ns_i=INIT, ns_r=None, addr=None,
             i_kw=None, r_kw=None, reject=False):
    """An MPA connection: Initiator in @ns_i, Responder in @ns_r (default:
    the same), through @addr (the Responder's; default loopback). Returns
    a Conn, whose .init_err is the Initiator's startup error (None if it
    reached Full Operation)."""
    ns_r = ns_r or ns_i
    addr = addr or ('127.0.0.1' if family == socket.AF_INET else '::1')
    ci, cr = tcp_pair(t, family, ns_i, ns_r, addr)
    attach(ci, MPA_ROLE_INITIATOR, **(i_kw or {}))
    attach(cr, MPA_ROLE_RESPONDER, **(r_kw or {}))
    # Python holds its lock in setsockopt(): a blocking MPA_START of the
    # Initiator would keep the Responder from answering. Non-blocking, it
    # sends the Request and returns; POLLOUT tells when the Reply was
    # processed (mpa.rst, "Blocking and non-blocking").
    ci.setblocking(False)
    try:
        mpa_start(ci)
        raise Fail('a non-blocking MPA_START finished at once')
    except BlockingIOError:
        pass
    mpa_start(cr)
    cr.setsockopt(SOL_MPA, MPA_REJECT if reject else MPA_ACCEPT, None, 0)
    p = select.poll()
    p.register(ci, select.POLLOUT | select.POLLERR)
    check(p.poll(60000), 'the Initiator never finished its startup')
    ci.setblocking(True)
    conn = Conn(ci, cr, ns_i, ns_r)
    conn.init_err = None
    if get_u32(ci, MPA_STATE) != MPA_STATE_FULL:
        code, reason, err = mpa_error(ci)
        conn.init_err = OSError(err, os.strerror(err))
    if get_u32(ci, MPA_STATE) == MPA_STATE_REJECTED:
        # told as a refused connect() is: the error, read once
        so_err = ci.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        check(so_err == errno.ECONNREFUSED,
              f'a rejected Initiator: SO_ERROR {so_err}, not ECONNREFUSED')
    if not reject and conn.init_err:
        raise Fail(f'Initiator MPA_START: {conn.init_err!r}')
    return conn


def pattern(n, seed):
    return bytes((seed * 7 + k * 13) & 0xff for k in range(n))


def recv_ulpdu(s):
    buf = b''
    while True:
        data, _, flags, _ = s.recvmsg(65536)
        check(data, 'end of stream instead of a ULPDU')
        buf += data
        if flags & socket.MSG_EOR:
            return buf


def xfer(conn, snd, sizes):
    """Send ULPDUs of @sizes from @snd, one send() each; the peer receives
    each whole."""
    rcv = conn.peer(snd)
    for n in sizes:
        data = pattern(n, len(conn.sent[snd]))
        eq(snd.send(data), n, 'send() of a ULPDU')
        got = recv_ulpdu(rcv)
        check(got == data, f'ULPDU of {n} octets came back as {len(got)} '
              'different octets')
        conn.sent[snd].append(n)


def fpdu_span(ulen):
    n = 2 + ulen
    return n + (-n) % 4 + 4


def markers_for(sizes, on):
    """Markers in a direction that sends FPDUs of @sizes from SeqStart on:
    one every 512 octets of the stream, counted with the FPDU they fall in
    (at its start too); none when @on is false."""
    if not on:
        return 0
    pos = count = 0
    for ulen in sizes:
        left = fpdu_span(ulen)
        while left:
            if pos % 512 == 0:
                count += 1
                pos += 4
            k = min(left, 512 - pos % 512)
            pos += k
            left -= k
    return count


def sockaddrs(s):
    """(family, saddr, sport, daddr, dport) from getsockname/getpeername."""
    me, peer = s.getsockname(), s.getpeername()
    return s.family, me[0], me[1], peer[0], peer[1]


def conn_base(s, role, state, kernel=0):
    fam, sa, sp, da, dp = sockaddrs(s)
    d = {'ino': os.fstat(s.fileno()).st_ino, 'family': int(fam),
         'sport': sp, 'dport': dp, 'kernel': kernel, 'role': role,
         'state': state}
    if fam == socket.AF_INET:
        d.update({'saddr4': sa, 'daddr4': da})
    else:
        d.update({'saddr6': str(ipaddress.ip_address(sa)),
                  'daddr6': str(ipaddress.ip_address(da))})
    return d


def expect_full(conn, s, rev=1, ird=0, ord_=0, err=('none', 'none', 0),
                extra=None):
    """What the dump must say of @s, an end of @conn in Full Operation,
    after the traffic conn.sent went through (all of it received)."""
    peer = conn.peer(s)
    role = 'initiator' if s is conn.i else 'responder'
    res = mpa_result(s)
    tx_m = bool(res['flags'] & MPA_RESULT_TX_MARKERS)
    rx_m = bool(res['flags'] & MPA_RESULT_RX_MARKERS)
    check(res['mulpdu'] >= 128, f'MULPDU {res["mulpdu"]} below 128')
    d = conn_base(s, role, 'full')
    d.update({'rev': rev, 'tx-markers-on': int(tx_m),
              'rx-markers-on': int(rx_m), 'crc': 1, 'mulpdu': res['mulpdu'],
              'ird': ird, 'ord': ord_,
              'tx-fpdus': len(conn.sent[s]), 'tx-octets': sum(conn.sent[s]),
              'rx-fpdus': len(conn.sent[peer]),
              'rx-octets': sum(conn.sent[peer]),
              'tx-markers': markers_for(conn.sent[s], tx_m),
              'rx-markers': markers_for(conn.sent[peer], rx_m),
              'crc-errors': 0, 'marker-errors': 0,
              'err-code': err[0], 'err-reason': err[1], 'err-errno': err[2]})
    d.update(extra or {})
    # the socket's own counters tell the same
    st = mpa_stats(s)
    eq({k: st[k] for k in COUNTERS}, {k: d[k] for k in COUNTERS},
       f'{role}: MPA_STATS against the expected counters')
    return d


def by_ino(conns):
    return {c['ino']: c for c in conns}


def dump(fam):
    return fam.dump('conn-get', {})


def ino(s):
    return os.fstat(s.fileno()).st_ino


# --- raw MPA peers ---------------------------------------------------------

def crc32c(data):
    crc = 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
    return crc ^ 0xffffffff


def request_frame(m=0, c=1, rev=1, pd=b''):
    return (b'MPA ID Req Frame' + bytes([(0x80 if m else 0) |
                                         (0x40 if c else 0), rev]) +
            struct.pack('>H', len(pd)) + pd)


def fpdu(data, bad_crc=False):
    """An FPDU without Markers; the CRC goes least significant octet first
    (RFC 5044 Figures 5 and 6)."""
    b = struct.pack('>H', len(data)) + data
    b += bytes((-len(b)) % 4)
    crc = crc32c(b) ^ (0x5a5a5a5a if bad_crc else 0)
    return b + struct.pack('<I', crc)


def recv_exact(s, n):
    buf = b''
    while len(buf) < n:
        d = s.recv(n - len(buf))
        check(d, f'end of stream after {len(buf)} of {n} octets')
        buf += d
    return buf


def raw_to_responder(t, ns):
    """A raw TCP Initiator and an MPA Responder (started later) in @ns."""
    raw, resp = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(resp, MPA_ROLE_RESPONDER)
    return raw, resp


def garbage_startup(t, ns):
    """A raw peer sends a Request with a wrong key: the Responder fails,
    error code 4 (BAD_KEY). Returns (raw, resp)."""
    raw, resp = raw_to_responder(t, ns)
    raw.sendall(b'GARBAGE, NOT MPA!!!' + bytes([0]))
    try:
        mpa_start(resp)
        raise Fail('MPA_START accepted a garbage Request')
    except OSError as e:
        oserr(e, errno.EPROTO, 'MPA_START on a garbage Request')
    eq(get_u32(resp, MPA_STATE), 7, 'MPA_STATE after the garbage (FAILED)')
    return raw, resp


def crc_error(t, ns, good=b'hello, MPA'):
    """A raw Initiator starts properly, sends one good FPDU and then one
    with a wrong CRC: the Responder's recv() gives EBADMSG (code 2)."""
    raw, resp = raw_to_responder(t, ns)
    raw.sendall(request_frame())
    mpa_start(resp)
    resp.setsockopt(SOL_MPA, MPA_ACCEPT, None, 0)
    reply = recv_exact(raw, 20)
    eq(reply[:16], b'MPA ID Rep Frame', 'Reply key')
    eq(reply[16] & 0xe0, 0x40, 'Reply M, C, R bits')
    raw.sendall(fpdu(good))
    eq(recv_ulpdu(resp), good, 'the good FPDU')
    raw.sendall(fpdu(b'this one is spoiled', bad_crc=True))
    try:
        resp.recv(100)
        raise Fail('recv() returned the FPDU with a wrong CRC')
    except OSError as e:
        oserr(e, errno.EBADMSG, 'recv() of an FPDU with a wrong CRC')
    eq(mpa_error(resp), (2, 18, errno.EBADMSG), 'MPA_ERROR (code 2, CRC)')
    return raw, resp


# --- events ----------------------------------------------------------------

def listener(t, ns=INIT):
    fam = t.ynl(ns)
    fam.ntf_subscribe('events')
    return fam


def events(fam, n, timeout=20):
    """Wait for @n events on @fam (more may come): [(name, msg)]."""
    end = time.monotonic() + timeout
    while len(fam.async_msg_queue) < n and time.monotonic() < end:
        r = select_wait(fam.sock, end - time.monotonic())
        if r:
            fam.check_ntf()
    got = [(m['name'], m['msg']) for m in fam.async_msg_queue]
    fam.async_msg_queue.clear()
    return got


def quiet(fam, sec=1.0):
    """Events that arrive on @fam within @sec (should be none)."""
    time.sleep(sec)
    fam.check_ntf()
    got = [(m['name'], m['msg']) for m in fam.async_msg_queue]
    fam.async_msg_queue.clear()
    return got


def select_wait(sock, timeout):
    return select.select([sock], [], [], max(0, timeout))[0]


def event_of(evs, name, ino_):
    got = [m for n, m in evs if n == name and m['ino'] == ino_]
    eq(len(got), 1, f'{name} events for socket {ino_} (of {evs!r})')
    return got[0]


# --- statistics ------------------------------------------------------------

def proc_stat(ns):
    with ns:
        with open('/proc/thread-self/net/mpa_stat', encoding='ascii') as f:
            text = f.read()
    out = {}
    for line in text.splitlines():
        k, v = line.split()
        out[k] = int(v)
    return out


def stats_as_proc(st):
    """What /proc/net/mpa_stat must show for stats-get's answer @st (and
    with 0 in AwaitRequest, RequestReceived, AwaitReply: the caller knows
    when the startup count is not 0)."""
    fail = {f['reason']: f['count'] for f in st.get('failure', [])}
    p = {'MpaCurrStreaming': st['conns-streaming'],
         'MpaCurrAwaitRequest': 0, 'MpaCurrRequestReceived': 0,
         'MpaCurrAwaitReply': 0,
         'MpaCurrFull': st['conns-full'],
         'MpaCurrRejected': st['conns-rejected'],
         'MpaCurrFailed': st['conns-failed'],
         'MpaAttached': st['attached'], 'MpaEstablished': st['established'],
         'MpaRejected': st['rejected'],
         'MpaStartupFailed': st['startup-failed']}
    for k in COUNTERS:
        p['Mpa' + ''.join(w.capitalize() for w in k.split('-'))] = st[k]
    for name in PROC_REASONS:
        reason = ''.join('-' + ch.lower() if ch.isupper() else ch
                         for ch in name).lstrip('-')
        p['MpaStartupFail' + name] = fail.get(reason, 0)
    return p


def zero_stats():
    return {k: 0 for k in STATS_KEYS}


# --- running other programs ------------------------------------------------

def run_in(ns, cmd, env=None, uid=None, **kw):
    """Run @cmd in @ns (a subprocess inherits our thread's namespace)."""
    e = dict(os.environ)
    e.update(env or {})
    pre = None
    if uid is not None:
        def pre():
            drop_privileges(uid)
    with ns:
        return subprocess.run(cmd, capture_output=True, text=True, env=e,
                              preexec_fn=pre, timeout=300, **kw)


def cli(ns, *args, env=None):
    r = run_in(ns, [PY, CLI, '--spec', SPEC, '--schema', SCHEMA] +
               list(args), env=env)
    return r.returncode, r.stdout, r.stderr


def ynl_for_everybody():
    """A copy of YNL's lib/ that uid 65534 can read (the source tree may
    live in root's home)."""
    global YNL_COPY  # pylint: disable=global-statement
    if not YNL_COPY:
        YNL_COPY = tempfile.mkdtemp(prefix='mpanl-ynl-')
        os.chmod(YNL_COPY, 0o755)
        shutil.copytree(os.path.join(YNL, 'lib'),
                        os.path.join(YNL_COPY, 'lib'),
                        ignore=shutil.ignore_patterns('__pycache__'))
        for d, _, files in os.walk(YNL_COPY):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o644)
    return YNL_COPY


YNL_COPY = None


def mpactl(ns, *args, uid=None):
    ynl = YNL if uid is None else ynl_for_everybody()
    r = run_in(ns, [PY, MPACTL] + list(args), env={'MPA_YNL_DIR': ynl},
               uid=uid)
    return r.returncode, r.stdout, r.stderr


def wait_blocked(pid, syscalls, timeout=60, arg0=None):
    """Wait until process @pid sleeps in one of @syscalls (numbers), with
    @arg0 as its first argument if given: a listener that subscribed and
    now waits."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            with open(f'/proc/{pid}/syscall', encoding='ascii') as f:
                words = f.read().split()
            nr = words[0]
            if (nr.isdigit() and int(nr) in syscalls and
                    (arg0 is None or int(words[1], 16) == arg0)):
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise Fail(f'process {pid} never waited in syscalls {syscalls}')


def policy_text(pol):
    """cli.py's pprint of a policy; the set of revisions in both orders."""
    p = dict(pol)
    p['responder-revs'] = 'REVS'
    text = pprint.pformat(p) + '\n'
    revs = sorted(pol['responder-revs'])
    if not revs:
        return [text.replace("'REVS'", 'set()')]
    return [text.replace("'REVS'", '{' + ', '.join(repr(r) for r in o) + '}')
            for o in (revs, revs[::-1])]


# --- privileges ------------------------------------------------------------

def drop_privileges(uid):
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    # owner of our /proc/self files again, for uid_map
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)


def become_userns_root(flags):
    """unshare(CLONE_NEWUSER | ...) and map our uid and gid to root."""
    uid, gid = os.getuid(), os.getgid()
    sys_unshare(flags)
    with open('/proc/self/setgroups', 'w', encoding='ascii') as f:
        f.write('deny')
    with open('/proc/self/uid_map', 'w', encoding='ascii') as f:
        f.write(f'0 {uid} 1')
    with open('/proc/self/gid_map', 'w', encoding='ascii') as f:
        f.write(f'0 {gid} 1')


def in_child(fn, hold=None):
    """Run @fn in a forked child; returns what it returned (JSON-able), or
    raises Fail with the child's exception. With @hold, a callable, the
    child sends fn's result, then waits while the parent runs
    hold(pid, result), so the parent can look at the child's namespaces."""
    r, w = os.pipe()
    r2, w2 = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(w2)
        try:
            signal.alarm(120)
            out = json.dumps({'ok': fn()})
        except BaseException as e:  # pylint: disable=broad-except
            out = json.dumps({'exc': ''.join(
                traceback.format_exception(type(e), e, e.__traceback__))})
        os.write(w, out.encode() + b'\n')
        if hold:
            os.read(r2, 1)
        os._exit(0)
    os.close(w)
    os.close(r2)
    data = b''
    with os.fdopen(r, 'rb') as f:
        data = f.readline()
    try:
        res = json.loads(data) if data else {'exc': 'child died'}
        if 'ok' in res and hold:
            hold(pid, res['ok'])
    finally:
        try:
            os.write(w2, b'x')      # the child waits for it with @hold only
        except BrokenPipeError:
            pass
        os.close(w2)
        os.waitpid(pid, 0)
    if 'exc' in res:
        raise Fail('in the child: ' + res['exc'])
    return res['ok']


def nl_errno(fn):
    """Run @fn; the errno of the NlError it raised, 0 if none."""
    try:
        fn()
        return 0
    except NlError as e:
        return e.error


def fam_here():
    return YnlFamily(SPEC, '')


def enter_ns(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        sys_setns(fd, CLONE_NEWNET)
    finally:
        os.close(fd)


# === the tests =============================================================

TESTS = []


def test(fn):
    TESTS.append(fn)
    return fn


@test
def spec_validates_and_resolves(t):
    """The spec passes the genetlink-legacy schema; the kernel has its family with
    the ops and the events group."""
    fam = t.ynl(INIT, SCHEMA)
    eq(sorted(fam.ops), ['conn-get', 'policy-get', 'policy-set',
                         'stats-get'], 'requests of the spec')
    eq(sorted(m for m in fam.msgs if fam.msgs[m].is_async),
       ['closed-ntf', 'error-ntf', 'established-ntf', 'rejected-ntf'],
       'notifications of the spec')
    eq(sorted(fam.nlproto.genl_family['mcast']), ['events'],
       'multicast groups of the kernel\'s family')


# --- cli.py ----------------------------------------------------------------

@test
def cli_policy_get(t):
    ns = t.netns()
    rc, out, err = cli(ns, '--do', 'policy-get')
    eq(rc, 0, f'cli.py exit status ({err})')
    check(out in policy_text(DEFAULT_POLICY),
          f'cli.py policy-get printed {out!r}, want {policy_text(DEFAULT_POLICY)[0]!r}')
    eq(ast.literal_eval(out), DEFAULT_POLICY, 'policy-get')


@test
def cli_policy_set(t):
    ns = t.netns()
    rc, out, err = cli(ns, '--do', 'policy-set', '--json',
                       '{"crc-off-allowed": 1, "timeout-ms": 2500}')
    eq(rc, 0, f'cli.py exit status ({err})')
    want = dict(DEFAULT_POLICY, **{'crc-off-allowed': 1, 'timeout-ms': 2500})
    check(out in policy_text(want), f'cli.py policy-set printed {out!r}')
    rc, out, err = cli(ns, '--do', 'policy-get')
    check(out in policy_text(want), f'policy-get after the set: {out!r}')


@test
def cli_policy_set_einval(t):
    ns = t.netns()
    rc, out, err = cli(ns, '--do', 'policy-set', '--json',
                       '{"markers": 1, "responder-revs": 0}')
    eq(rc, 1, 'cli.py exit status')
    lines = out.splitlines()
    eq(lines[0], 'Netlink error: Invalid argument', 'first line')
    eq(lines[2:], ['\terror: -22',
                   "\textack: {'msg': 'a Responder must accept Rev 1 or Rev 2', "
                   "'bad-attr': '.responder-revs'}"], 'the error and extack')
    fam = t.ynl(ns)
    eq(fam.do('policy-get', {}), DEFAULT_POLICY, 'policy after the EINVAL')


@test
def cli_stats_get(t):
    ns = t.netns()
    rc, out, err = cli(ns, '--do', 'stats-get')
    eq(rc, 0, f'cli.py exit status ({err})')
    eq(out, pprint.pformat(zero_stats()) + '\n', 'stats-get of a new netns')
    conn = mpa_pair(t, ns_i=ns)
    xfer(conn, conn.i, [10, 300])
    xfer(conn, conn.r, [40])
    rc, out, err = cli(ns, '--do', 'stats-get')
    want = dict(zero_stats(), **{
        'conns-full': 2, 'attached': 2, 'established': 2, 'tx-fpdus': 3,
        'tx-octets': 350, 'rx-fpdus': 3, 'rx-octets': 350})
    eq(out, pprint.pformat(want) + '\n', 'stats-get after traffic')


@test
def cli_conn_get(t):
    ns = t.netns()
    rc, out, err = cli(ns, '--dump', 'conn-get')
    eq((rc, out), (0, '[]\n'), f'conn-get of a new netns ({err})')
    conn = mpa_pair(t, ns_i=ns, r_kw={'markers': 1})
    xfer(conn, conn.i, [1000, 30])
    xfer(conn, conn.r, [5])
    rc, out, err = cli(ns, '--dump', 'conn-get')
    want = [expect_full(conn, conn.i), expect_full(conn, conn.r)]
    eq(ast.literal_eval(out), want, 'conn-get')
    eq(out, pprint.pformat(want) + '\n', 'conn-get\'s text')


# cli.py with its --sleep, the time it listens before it prints what it
# heard, made a wait for a line on its stdin: the test ends it when its
# own listener has heard every event, whatever the guest's speed.
CLI_UNTIL_STDIN = '''import os, runpy, sys, time
time.sleep = lambda sec: sys.stdin.readline()
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(sys.argv[0]))
runpy.run_path(sys.argv[0], run_name='__main__')
'''


@test
def cli_subscribe_events(t):
    ns = t.netns()
    with ns:
        p = subprocess.Popen([PY, '-c', CLI_UNTIL_STDIN, CLI,
                              '--spec', SPEC, '--schema', SCHEMA,
                              '--subscribe', 'events', '--sleep', '1'],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    t.later(p.kill)
    # read() of its stdin: subscribed (it reads files before, as it loads)
    wait_blocked(p.pid, (0,), arg0=0)
    lst = listener(t, ns)
    conn = mpa_pair(t, ns_i=ns)
    xfer(conn, conn.i, [77])
    xfer(conn, conn.r, [7])
    want_i, want_r = expect_full(conn, conn.i), expect_full(conn, conn.r)
    conn.close()
    eq(len(events(lst, 4)), 4, 'events heard by the test\'s listener')
    out, err = p.communicate(input='\n', timeout=120)
    eq(p.returncode, 0, f'cli.py exit status ({err})')
    got = ast.literal_eval(out)
    names = sorted(m['name'] for m in got)
    eq(names, ['closed-ntf', 'closed-ntf', 'established-ntf',
               'established-ntf'], 'events heard')
    closed = {m['msg']['ino']: m['msg'] for m in got if m['name'] == 'closed-ntf'}
    eq(closed, {want_i['ino']: want_i, want_r['ino']: want_r},
       'closed-ntf with the final counters')


# --- mpactl ----------------------------------------------------------------

POLICY_LINES = ['crc-off-allowed 0', 'markers 0', 'initiator-rev 1',
                'responder-revs 1,2', 'permissive 0', 'timeout-ms 10000']


@test
def mpactl_policy(t):
    ns = t.netns()
    rc, out, err = mpactl(ns, 'policy')
    eq((rc, out.splitlines(), err), (0, POLICY_LINES, ''), 'mpactl policy')
    rc, out, err = mpactl(ns, 'policy', '--json')
    eq(json.loads(out), dict(DEFAULT_POLICY, **{'responder-revs': [1, 2]}),
       'mpactl policy --json')


@test
def mpactl_policy_set(t):
    ns = t.netns()
    rc, out, err = mpactl(ns, 'policy', 'set', 'markers=1', 'responder-revs=2',
                          'timeout-ms=1234')
    eq((rc, err), (0, ''), 'mpactl policy set: status and stderr')
    eq(out.splitlines(), ['crc-off-allowed 0', 'markers 1', 'initiator-rev 1',
                          'responder-revs 2', 'permissive 0',
                          'timeout-ms 1234'], 'the new policy it printed')
    want = dict(DEFAULT_POLICY, **{'markers': 1, 'responder-revs': {'rev2'},
                                   'timeout-ms': 1234})
    fam = t.ynl(ns)
    eq(fam.do('policy-get', {}), want, 'policy read back')

    # the kernel's refusals, with its errno and extack message
    rc, out, err = mpactl(ns, 'policy', 'set', 'initiator-rev=0')
    eq((rc, out), (1, ''), 'initiator-rev=0: status, stdout')
    eq(err, 'mpactl: policy set: Numerical result out of range (ERANGE): '
       'integer out of range [initiator-rev]\n', 'its message')
    rc, out, err = mpactl(ns, 'policy', 'set', 'responder-revs=')
    eq((rc, err), (1, 'mpactl: policy set: Invalid argument (EINVAL): a '
                   'Responder must accept Rev 1 or Rev 2 [responder-revs]\n'),
       'responder-revs= (none)')
    rc, out, err = mpactl(ns, 'policy', 'set', 'markers=0', uid=NOBODY)
    eq((rc, out, err), (1, '', 'mpactl: policy set: Operation not permitted '
                        '(EPERM)\n'), 'as uid 65534')
    rc, out, err = mpactl(ns, 'policy', 'set', 'bogus=1')
    eq(rc, 2, 'unknown key: usage error')
    eq(fam.do('policy-get', {}), want, 'policy after the refusals')


@test
def mpactl_conns(t):
    ns = t.netns()
    rc, out, err = mpactl(ns, 'conns')
    eq((rc, out, err), (0, '', ''), 'no connections')
    conn = mpa_pair(t, ns_i=ns, i_kw={'markers': 1})
    xfer(conn, conn.i, [600])
    xfer(conn, conn.r, [2000, 3])
    wi, wr = expect_full(conn, conn.i), expect_full(conn, conn.r)
    pi, pr = conn.i.getsockname()[1], conn.r.getsockname()[1]
    mul_i, mul_r = wi['mulpdu'], wr['mulpdu']
    rc, out, err = mpactl(ns, 'conns')
    eq((rc, err), (0, ''), 'mpactl conns: status, stderr')
    eq(out.splitlines(), [
        f'127.0.0.1:{pi} -> 127.0.0.1:{pr} initiator full rev 1 M 0/1 CRC on '
        f'MULPDU {mul_i} IRD/ORD 0/0 tx-fpdus 1 tx-octets 600 rx-fpdus 2 '
        f'rx-octets 2003 tx-markers 0 rx-markers {wi["rx-markers"]} '
        'crc-errors 0 marker-errors 0 error none',
        f'127.0.0.1:{pr} -> 127.0.0.1:{pi} responder full rev 1 M 1/0 CRC on '
        f'MULPDU {mul_r} IRD/ORD 0/0 tx-fpdus 2 tx-octets 2003 rx-fpdus 1 '
        f'rx-octets 600 tx-markers {wr["tx-markers"]} rx-markers 0 '
        'crc-errors 0 marker-errors 0 error none'], 'mpactl conns')
    # the 2000-octet ULPDU's FPDU spans 2008 octets plus Markers at 0, 512,
    # 1024 and 1536; the 3-octet one (2024..2036) has none
    eq(wr['tx-markers'], 4, 'Markers in FPDUs of 2000 and 3 octets')
    rc, out, err = mpactl(ns, 'conns', '--json')
    eq(json.loads(out), [wi, wr], 'mpactl conns --json')

    # a failed startup: its error by name
    raw, resp = garbage_startup(t, ns)
    rc, out, err = mpactl(ns, 'conns')
    rp, sp = raw.getsockname()[1], resp.getsockname()[1]
    eq(out.splitlines()[2],
       f'127.0.0.1:{sp} -> 127.0.0.1:{rp} responder failed tx-fpdus 0 '
       'tx-octets 0 rx-fpdus 0 rx-octets 0 tx-markers 0 rx-markers 0 '
       'crc-errors 0 marker-errors 0 error startup/bad-key EPROTO',
       'mpactl conns: the failed one')


@test
def mpactl_stats(t):
    ns = t.netns()
    conn = mpa_pair(t, ns_i=ns)
    xfer(conn, conn.i, [100, 200])
    conn.close()
    garbage_startup(t, ns)
    rc, out, err = mpactl(ns, 'stats')
    eq((rc, err), (0, ''), 'mpactl stats: status, stderr')
    want = dict(zero_stats(), **{'conns-failed': 1, 'attached': 3,
                                 'established': 2, 'startup-failed': 1,
                                 'tx-fpdus': 2, 'tx-octets': 300,
                                 'rx-fpdus': 2, 'rx-octets': 300})
    eq(out.splitlines(), [f'{k} {want[k]}' for k in STATS_KEYS] +
       ['startup-failed-bad-key 1'], 'mpactl stats')
    rc, out, err = mpactl(ns, 'stats', '--json')
    eq(json.loads(out), dict(want, failures={'bad-key': 1}),
       'mpactl stats --json')


def endpoints(s):
    """"ADDR:PORT -> ADDR:PORT" of @s as mpactl prints it."""
    fam, sa, sp, da, dp = sockaddrs(s)
    if fam == socket.AF_INET6:
        return f'[{sa}]:{sp} -> [{da}]:{dp}'
    return f'{sa}:{sp} -> {da}:{dp}'


@test
def mpactl_monitor(t):
    ns = t.netns()
    with ns:
        p = subprocess.Popen([PY, MPACTL, 'monitor', '--count', '6',
                              '--timeout', '120'],
                             env=dict(os.environ, MPA_YNL_DIR=YNL),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True)
    t.later(p.kill)
    # its readiness signal: subscribed, every event from now on is seen
    eq(p.stderr.readline(), MPACTL_READY + '\n', 'mpactl monitor ready')
    conn = mpa_pair(t, ns_i=ns, r_kw={'markers': 1})
    xfer(conn, conn.i, [64])
    raw, resp = garbage_startup(t, ns)
    ep_i, ep_r, ep_g = endpoints(conn.i), endpoints(conn.r), endpoints(resp)
    conn.close()
    resp.close()
    out, err = p.communicate(timeout=120)
    eq((p.returncode, err), (0, ''), 'mpactl monitor: status, stderr')
    want = [
        f'established {ep_r} responder rev 1 M 0/1 CRC on',
        f'established {ep_i} initiator rev 1 M 1/0 CRC on',
        f'error {ep_g} responder code 4 (startup) reason bad-key errno EPROTO',
        f'closed {ep_i} initiator full tx-fpdus 1 tx-octets 64 rx-fpdus 0 '
        'rx-octets 0 tx-markers 1 rx-markers 0 crc-errors 0 marker-errors 0',
        f'closed {ep_r} responder full tx-fpdus 0 tx-octets 0 rx-fpdus 1 '
        'rx-octets 64 tx-markers 0 rx-markers 1 crc-errors 0 marker-errors 0',
        f'closed {ep_g} responder failed tx-fpdus 0 tx-octets 0 rx-fpdus 0 '
        'rx-octets 0 tx-markers 0 rx-markers 0 crc-errors 0 marker-errors 0',
    ]
    eq(out.splitlines(), want, 'mpactl monitor lines, in order')


# --- policy ----------------------------------------------------------------

@test
def policy_defaults_in_new_netns(t):
    ns = t.netns()
    fam = t.ynl(ns)
    eq(fam.do('policy-get', {}), DEFAULT_POLICY, 'policy of a new netns')
    # a new connection starts from it
    ci, cr = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(ci, MPA_ROLE_INITIATOR)
    eq((get_u32(ci, MPA_MARKERS), get_u32(ci, MPA_REVISION),
        get_u32(ci, MPA_PERMISSIVE), get_u32(ci, MPA_TIMEOUT)),
       (0, 1, 0, 10000), 'MPA_MARKERS, REVISION, PERMISSIVE, TIMEOUT')
    try:
        set_u32(ci, MPA_CRC, 0)
        raise Fail('MPA_CRC 0 allowed without crc-off-allowed')
    except OSError as e:
        oserr(e, errno.EPERM, 'MPA_CRC 0')


@test
def policy_set_get_round_trip(t):
    ns = t.netns()
    fam = t.ynl(ns)
    new = {'crc-off-allowed': 1, 'markers': 1, 'initiator-rev': 2,
           'responder-revs': {'rev2'}, 'permissive': 1, 'timeout-ms': 4321}
    early, _ = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(early, MPA_ROLE_INITIATOR)
    eq(fam.do('policy-set', dict(new)), new, 'policy-set\'s answer')
    eq(fam.do('policy-get', {}), new, 'policy-get after it')
    # new connections take it as their defaults
    ci, cr = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(ci, MPA_ROLE_INITIATOR)
    eq((get_u32(ci, MPA_MARKERS), get_u32(ci, MPA_REVISION),
        get_u32(ci, MPA_PERMISSIVE), get_u32(ci, MPA_TIMEOUT)),
       (1, 2, 1, 4321), 'MPA_MARKERS, REVISION, PERMISSIVE, TIMEOUT')
    set_u32(ci, MPA_CRC, 0)             # allowed now
    eq(get_u32(ci, MPA_CRC), 0, 'MPA_CRC')
    # one attached before keeps the defaults it took then
    eq((get_u32(early, MPA_MARKERS), get_u32(early, MPA_REVISION),
        get_u32(early, MPA_TIMEOUT)), (0, 1, 10000),
       'a connection attached before the change')
    # back to the defaults, all at once
    eq(fam.do('policy-set', dict(DEFAULT_POLICY)), DEFAULT_POLICY,
       'policy-set of the defaults')


@test
def policy_partial_set_keeps_the_rest(t):
    ns = t.netns()
    fam = t.ynl(ns)
    want = dict(DEFAULT_POLICY)
    for change in ({'markers': 1}, {'timeout-ms': 777},
                   {'responder-revs': {'rev1'}}, {'initiator-rev': 2},
                   {'permissive': 1}, {'crc-off-allowed': 1},
                   {'markers': 0, 'timeout-ms': 3600000}):
        want.update(change)
        eq(fam.do('policy-set', dict(change)), want, f'after {change}')
        eq(fam.do('policy-get', {}), want, f'policy-get after {change}')
    eq(fam.do('policy-set', {}), want, 'an empty policy-set changes nothing')


@test
def policy_refused_leaves_it_unchanged(t):
    ns = t.netns()
    fam = t.ynl(ns)
    before = {'crc-off-allowed': 0, 'markers': 1, 'initiator-rev': 2,
              'responder-revs': {'rev2'}, 'permissive': 0, 'timeout-ms': 999}
    fam.do('policy-set', dict(before))
    # (request, errno, extack message): the handler's checks give EINVAL,
    # the spec's ranges (netlink policy) ERANGE, its mask EINVAL
    revs_msg = 'a Responder must accept Rev 1 or Rev 2'
    rng = (errno.ERANGE, 'integer out of range')
    bad = [({'initiator-rev': 0}, *rng),
           ({'initiator-rev': 3}, *rng),
           ({'responder-revs': 0}, errno.EINVAL, revs_msg),
           ({'responder-revs': 1}, errno.EINVAL, 'reserved bit set'),
           ({'responder-revs': 8}, errno.EINVAL, 'reserved bit set'),
           ({'timeout-ms': 0}, *rng), ({'timeout-ms': 3600001}, *rng),
           ({'markers': 2}, *rng), ({'crc-off-allowed': 2}, *rng),
           ({'permissive': 7}, *rng),
           # the good part of a bad request is not applied either
           ({'markers': 0, 'timeout-ms': 5, 'responder-revs': 0},
            errno.EINVAL, revs_msg),
           ({'permissive': 1, 'initiator-rev': 0}, *rng)]
    for req, code, msg in bad:
        try:
            fam.do('policy-set', dict(req))
            raise Fail(f'policy-set {req} was accepted')
        except NlError as e:
            eq((e.error, e.nl_msg.extack.get('msg')), (code, msg),
               f'errno and extack of policy-set {req}')
        eq(fam.do('policy-get', {}), before, f'policy after {req}')


@test
def policy_is_per_netns(t):
    a, b = t.netns(), t.netns()
    fa, fb, fi = t.ynl(a), t.ynl(b), t.ynl(INIT)
    init_before = fi.do('policy-get', {})
    fa.do('policy-set', {'markers': 1, 'timeout-ms': 55})
    eq(fa.do('policy-get', {}), dict(DEFAULT_POLICY, markers=1,
                                     **{'timeout-ms': 55}), 'netns A')
    eq(fb.do('policy-get', {}), DEFAULT_POLICY, 'netns B')
    eq(fi.do('policy-get', {}), init_before, 'the initial netns')


# --- who may change the policy ----------------------------------------------

@test
def perm_userns_root_sets_own_netns(t):
    """An unprivileged user that made its own user and network namespace is
    root there and may set that namespace's policy."""
    seen = {}

    def child():
        drop_privileges(NOBODY)
        become_userns_root(CLONE_NEWUSER | CLONE_NEWNET)
        fam = fam_here()
        return [fam.do('policy-set', {'markers': 1, 'timeout-ms': 4242,
                                      'responder-revs': ['rev1']})['markers'],
                os.getuid()]

    def look(pid, res):
        # real root reads the child's namespace's policy
        with open(f'/proc/{pid}/ns/net', 'rb') as f:
            sys_setns(f.fileno(), CLONE_NEWNET)
        try:
            seen['pol'] = fam_here().do('policy-get', {})
        finally:
            sys_setns(INIT_NS_FD, CLONE_NEWNET)

    eq(in_child(child, hold=look), [1, 0], 'policy-set in the child\'s '
       'namespace, as its root')
    eq(seen['pol'], dict(DEFAULT_POLICY, markers=1, **{
        'timeout-ms': 4242, 'responder-revs': {'rev1'}}),
       'the child\'s namespace\'s policy, read by real root')


@test
def perm_userns_root_not_initial_netns(t):
    """... but not the initial namespace's, through a netlink socket it had
    opened there before unshare."""
    fi = t.ynl(INIT)
    before = fi.do('policy-get', {})
    t.policy_guard(fi)
    flip = {'markers': 1 - before['markers'],
            'timeout-ms': before['timeout-ms'] % 1000 + 1}

    def child():
        drop_privileges(NOBODY)
        old = fam_here()                 # in the initial netns
        become_userns_root(CLONE_NEWUSER | CLONE_NEWNET)
        own = fam_here()
        return [nl_errno(lambda: old.do('policy-set', dict(flip))),
                nl_errno(lambda: own.do('policy-set', dict(flip))),
                old.do('policy-get', {})['timeout-ms']]

    eq(in_child(child), [errno.EPERM, 0, before['timeout-ms']],
       'EPERM through the old socket, 0 in its own netns; reading works')
    eq(fi.do('policy-get', {}), before, 'the initial netns\'s policy')


@test
def perm_userns_root_not_sibling_netns(t):
    """... nor a namespace that real root made: it cannot enter it, and a
    socket it opens there (having been put there) gets EPERM."""
    sib = t.netns()
    fs = t.ynl(sib)
    want = fs.do('policy-get', {})

    def child_setns():
        fd = os.open(sib.path, os.O_RDONLY)
        drop_privileges(NOBODY)
        become_userns_root(CLONE_NEWUSER | CLONE_NEWNET)
        try:
            sys_setns(fd, CLONE_NEWNET)
            return 0
        except OSError as e:
            return e.errno

    def child_inside():
        enter_ns(sib.path)               # as real root, then drop it
        drop_privileges(NOBODY)
        become_userns_root(CLONE_NEWUSER)
        fam = fam_here()
        return [nl_errno(lambda: fam.do('policy-set', {'markers': 1})),
                fam.do('policy-get', {})['markers']]

    eq(in_child(child_setns), errno.EPERM, 'setns into the sibling')
    eq(in_child(child_inside), [errno.EPERM, 0], 'policy-set from inside')
    eq(fs.do('policy-get', {}), want, 'the sibling\'s policy')


@test
def perm_unprivileged_gets_eperm(t):
    """Without a user namespace of its own an unprivileged user may change
    no policy, the initial namespace's or another's."""
    ns = t.netns()
    fi, fn = t.ynl(INIT), t.ynl(ns)
    before_i = fi.do('policy-get', {})
    t.policy_guard(fi)

    def child_one(path):
        def run():
            if path:
                enter_ns(path)
            drop_privileges(NOBODY)
            fam = fam_here()
            return nl_errno(lambda: fam.do('policy-set',
                                           {'crc-off-allowed': 1}))
        return run

    eq(in_child(child_one(None)), errno.EPERM,
       'policy-set in the initial netns as uid 65534')
    eq(in_child(child_one(ns.path)), errno.EPERM,
       'policy-set in a new netns as uid 65534')
    eq(fi.do('policy-get', {}), before_i, 'the initial netns\'s policy')
    eq(fn.do('policy-get', {}), DEFAULT_POLICY, 'the new netns\'s policy')


@test
def perm_unprivileged_reads(t):
    """Reading needs no privilege: policy-get, conn-get, stats-get."""
    ns = t.netns()
    fam = t.ynl(ns)
    fam.do('policy-set', {'timeout-ms': 31337})
    conn = mpa_pair(t, ns_i=ns)
    xfer(conn, conn.i, [123])
    xfer(conn, conn.r, [45])

    def child():
        enter_ns(ns.path)
        drop_privileges(NOBODY)
        f = fam_here()
        return [os.getuid(), f.do('policy-get', {})['timeout-ms'],
                [[c['ino'], c['tx-octets'], c['rx-octets']]
                 for c in f.dump('conn-get', {})],
                f.do('stats-get', {})]

    def child_events():
        # subscribe, and make a connection of our own to hear of
        enter_ns(ns.path)
        drop_privileges(NOBODY)
        t2 = T()
        try:
            lst = listener(t2, HERE_NS)
            c = mpa_pair(t2, ns_i=HERE_NS)
            evs = events(lst, 2)
            got = [sorted([n, m['ino']] for n, m in evs),
                   sorted(['established-ntf', ino(x)] for x in (c.i, c.r))]
        finally:
            t2.cleanup()
        with open('/proc/thread-self/net/mpa_stat', encoding='ascii') as f:
            return got + [f.read()]

    uid, timeout, conns, st = in_child(child)
    eq((uid, timeout), (NOBODY, 31337), 'uid and policy-get')
    eq(conns, [[ino(conn.i), 123, 45], [ino(conn.r), 45, 123]], 'conn-get')
    eq(st, fam.do('stats-get', {}), 'stats-get as uid 65534 and as root')
    eq(st['tx-octets'], 168, 'tx-octets')
    heard, want, proc = in_child(child_events)
    eq(heard, want, 'events heard by uid 65534, of its own connection')
    eq(proc.splitlines(), [f'{k:<31}{v}' for k, v in proc_stat(ns).items()],
       '/proc/net/mpa_stat read by uid 65534')


# --- the connection dump ------------------------------------------------------

def dump_between_netns(t, family, addr):
    a, b = t.netns(), t.netns()
    t.veth(a, b)
    fa, fb, fi = t.ynl(a), t.ynl(b), t.ynl(INIT)
    # Markers asked by the Initiator only: the Responder sends them
    conn = mpa_pair(t, family, ns_i=a, ns_r=b, addr=addr,
                    i_kw={'markers': 1})
    xfer(conn, conn.i, [1, 511, 512, 3000])
    xfer(conn, conn.r, [64768, 100, 1500])
    wi = expect_full(conn, conn.i)
    wr = expect_full(conn, conn.r)
    eq((wi['tx-markers-on'], wi['rx-markers-on'], wr['tx-markers-on'],
        wr['rx-markers-on']), (0, 1, 1, 0), 'Markers per direction')
    eq(dump(fa), [wi], 'netns A\'s dump: the Initiator only')
    eq(dump(fb), [wr], 'netns B\'s dump: the Responder only')
    check(not {ino(conn.i), ino(conn.r)} & set(by_ino(dump(fi))),
          'the initial netns lists neither')
    # the addresses are the ones the sockets have
    if family == socket.AF_INET:
        eq((wi['saddr4'], wi['daddr4']), ('10.77.0.1', '10.77.0.2'),
           'IPv4 addresses')
    else:
        eq((wi['saddr6'], wi['daddr6']), ('fd77::1', 'fd77::2'),
           'IPv6 addresses')
    eq((wi['sport'], wi['dport']), (wr['dport'], wr['sport']), 'ports')


@test
def dump_ipv4_two_netns(t):
    dump_between_netns(t, socket.AF_INET, '10.77.0.2')


@test
def dump_ipv6_two_netns(t):
    dump_between_netns(t, socket.AF_INET6, 'fd77::2')


@test
def dump_ipv6_loopback_both_ends(t):
    ns = t.netns()
    fam = t.ynl(ns)
    conn = mpa_pair(t, socket.AF_INET6, ns_i=ns, i_kw={'markers': 1},
                    r_kw={'markers': 1})
    xfer(conn, conn.i, [700, 700])
    xfer(conn, conn.r, [9])
    wi, wr = expect_full(conn, conn.i), expect_full(conn, conn.r)
    eq((wi['saddr6'], wi['daddr6'], wi['family']), ('::1', '::1', 10),
       'IPv6 loopback')
    eq((wi['tx-markers-on'], wi['rx-markers-on']), (1, 1), 'Markers')
    eq(dump(fam), [wi, wr], 'the dump, in attach order')


@test
def dump_rev2_by_policy(t):
    ns = t.netns()
    fam = t.ynl(ns)
    fam.do('policy-set', {'initiator-rev': 2})
    conn = mpa_pair(t, ns_i=ns)
    xfer(conn, conn.i, [10])
    xfer(conn, conn.r, [20])
    # Rev 2's IRD/ORD block: 16 each by default
    eq(dump(fam), [expect_full(conn, conn.i, rev=2, ird=16, ord_=16),
                   expect_full(conn, conn.r, rev=2, ird=16, ord_=16)],
       'Rev 2 by the namespace\'s policy')


@test
def dump_rev2_enhanced(t):
    ns = t.netns()
    fam = t.ynl(ns)
    conn = mpa_pair(t, ns_i=ns, i_kw={'rev': 2, 'enhanced': (8, 4)},
                    r_kw={'enhanced': (16, 2)})
    xfer(conn, conn.i, [10])
    # cross-mapped: the Responder's IRD <= the Initiator's ORD, its ORD <=
    # the Initiator's IRD; the Initiator takes the Reply's as its limits
    wi = expect_full(conn, conn.i, rev=2, ird=2, ord_=4)
    wr = expect_full(conn, conn.r, rev=2, ird=4, ord_=2)
    ri, rr = mpa_result(conn.i), mpa_result(conn.r)
    eq((ri['ird'], ri['ord'], rr['ird'], rr['ord']), (2, 4, 4, 2),
       'MPA_RESULT IRD/ORD')
    eq(dump(fam), [wi, wr], 'Rev 2 with MPA_ENHANCED')


@test
def dump_closed_connection_disappears(t):
    ns = t.netns()
    fam = t.ynl(ns)
    c1 = mpa_pair(t, ns_i=ns)
    c2 = mpa_pair(t, ns_i=ns)
    xfer(c2, c2.i, [5])
    eq([c['ino'] for c in dump(fam)],
       [ino(c1.i), ino(c1.r), ino(c2.i), ino(c2.r)], 'four listed')
    w2 = [expect_full(c2, c2.i), expect_full(c2, c2.r)]
    c1.i.close()
    ci_r = ino(c1.r)
    eq([c['ino'] for c in dump(fam)], [ci_r] + [w['ino'] for w in w2],
       'three after one end closed')
    c1.r.close()
    eq(dump(fam), w2, 'the other connection, unchanged')
    c2.close()
    eq(dump(fam), [], 'none')
    st = fam.do('stats-get', {})
    eq((st['attached'], st['conns-full'], st['tx-octets']), (4, 0, 5),
       'attached, conns-full, tx-octets (closed ones count)')


@test
def dump_listening_and_streaming(t):
    """Attached but not started: state streaming, no negotiated fields,
    counters 0; the listener is no MPA connection."""
    ns = t.netns()
    fam = t.ynl(ns)
    ci, cr = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(ci, MPA_ROLE_INITIATOR)
    w = conn_base(ci, 'initiator', 'streaming')
    w.update({k: 0 for k in COUNTERS})
    w.update({'err-code': 'none', 'err-reason': 'none', 'err-errno': 0})
    eq(dump(fam), [w], 'one streaming connection')


@test
def dump_kernel_connection(t):
    """mpa_echo's Responder (a kernel socket in the initial netns) is
    listed with kernel=1, next to our Initiator with kernel=0."""
    r = subprocess.run(['modprobe', 'mpa_echo', 'port=7175'],
                       capture_output=True, text=True)
    check(r.returncode == 0, f'modprobe mpa_echo: {r.stderr.strip()}')
    t.later(lambda: subprocess.run(['rmmod', 'mpa_echo'],
                                   capture_output=True, check=False))
    fi = t.ynl(INIT)
    with INIT:
        c = t.sock(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        c.connect(('127.0.0.1', 7175))
    timeouts(c)
    attach(c, MPA_ROLE_INITIATOR)
    mpa_start(c)
    data = pattern(333, 1)
    c.send(data)
    eq(recv_ulpdu(c), data, 'the echo')
    port = c.getsockname()[1]
    mine = by_ino(dump(fi))[ino(c)]
    eq((mine['kernel'], mine['role'], mine['state'], mine['tx-octets'],
        mine['rx-octets']), (0, 'initiator', 'full', 333, 333), 'our end')
    echo = [x for x in dump(fi) if x['dport'] == port and x['sport'] == 7175]
    eq(len(echo), 1, 'mpa_echo\'s end listed once')
    e = echo[0]
    eq({k: e[k] for k in ('family', 'saddr4', 'daddr4', 'kernel', 'role',
                           'state', 'rev', 'crc', 'tx-fpdus', 'tx-octets',
                           'rx-fpdus', 'rx-octets', 'err-code')},
       {'family': 2, 'saddr4': '127.0.0.1', 'daddr4': '127.0.0.1',
        'kernel': 1, 'role': 'responder', 'state': 'full', 'rev': 1,
        'crc': 1, 'tx-fpdus': 1, 'tx-octets': 333, 'rx-fpdus': 1,
        'rx-octets': 333, 'err-code': 'none'}, 'mpa_echo\'s end')
    # mpa_kdetach() before the release: still a kernel connection when
    # it is announced closed
    lst = listener(t, INIT)
    c.close()
    r = subprocess.run(['rmmod', 'mpa_echo'], capture_output=True, text=True)
    eq(r.returncode, 0, f'rmmod mpa_echo ({r.stderr.strip()})')
    left = [x for x in dump(fi) if x['kernel']]
    eq(left, [], 'kernel connections after rmmod')
    evs = [m for n, m in events(lst, 2) if n == 'closed-ntf']
    eq(sorted((m['sport'], m['kernel']) for m in evs),
       sorted([(port, 0), (7175, 1)]), 'closed-ntf of both ends')


# --- events ---------------------------------------------------------------------

def established_both_ends(t, family):
    ns = t.netns()
    lst = listener(t, ns)
    conn = mpa_pair(t, family, ns_i=ns, r_kw={'markers': 1})
    evs = events(lst, 2)
    eq(sorted(n for n, _ in evs), ['established-ntf'] * 2, 'events')
    ei = event_of(evs, 'established-ntf', ino(conn.i))
    er = event_of(evs, 'established-ntf', ino(conn.r))
    # the state then: nothing sent yet
    wi, wr = expect_full(conn, conn.i), expect_full(conn, conn.r)
    eq(ei, wi, 'the Initiator\'s established-ntf')
    eq(er, wr, 'the Responder\'s established-ntf')
    eq(quiet(lst, 0.5), [], 'nothing more')


@test
def events_established_both_ends(t):
    established_both_ends(t, socket.AF_INET)


@test
def events_established_both_ends_v6(t):
    """The largest event: IPv6 addresses and the negotiated parameters
    (the message is sized for it, mpa_nl_conn_size())."""
    established_both_ends(t, socket.AF_INET6)


@test
def events_rejected(t):
    ns = t.netns()
    lst = listener(t, ns)
    conn = mpa_pair(t, ns_i=ns, reject=True)
    oserr(conn.init_err, errno.ECONNREFUSED, 'the Initiator\'s MPA_START')
    evs = events(lst, 2)
    eq(sorted(n for n, _ in evs), ['rejected-ntf'] * 2, 'events')
    zero = {k: 0 for k in COUNTERS}
    wi = dict(conn_base(conn.i, 'initiator', 'rejected'), **zero,
              **{'err-code': 'none', 'err-reason': 'rejected',
                 'err-errno': errno.ECONNREFUSED})
    wr = dict(conn_base(conn.r, 'responder', 'rejected'), **zero,
              **{'err-code': 'none', 'err-reason': 'none', 'err-errno': 0})
    eq(event_of(evs, 'rejected-ntf', ino(conn.i)), wi, 'the Initiator\'s')
    eq(event_of(evs, 'rejected-ntf', ino(conn.r)), wr, 'the Responder\'s')
    # a plain stream again, both ways
    conn.i.sendall(b'plain')
    eq(recv_exact(conn.r, 5), b'plain', 'the stream after the reject')


@test
def events_error_invalid_startup_frame(t):
    ns = t.netns()
    lst = listener(t, ns)
    raw, resp = garbage_startup(t, ns)
    evs = events(lst, 1)
    w = dict(conn_base(resp, 'responder', 'failed'),
             **{k: 0 for k in COUNTERS},
             **{'err-code': 'startup', 'err-reason': 'bad-key',
                'err-errno': errno.EPROTO})
    eq(evs, [('error-ntf', w)], 'error-ntf, code 4')
    eq(lst.consts['error'].entries['startup'].value, 4, 'code of "startup"')
    eq(mpa_error(resp), (4, 1, errno.EPROTO), 'MPA_ERROR')
    eq(raw.recv(10), b'', 'the Responder closed TCP (FIN)')
    eq(quiet(lst, 0.5), [], 'nothing more')


@test
def events_error_crc(t):
    ns = t.netns()
    lst = listener(t, ns)
    raw, resp = crc_error(t, ns)
    evs = events(lst, 2)
    eq([n for n, _ in evs], ['established-ntf', 'error-ntf'], 'events')
    e = evs[1][1]
    res = mpa_result(resp)
    w = dict(conn_base(resp, 'responder', 'full'),
             **{'rev': 1, 'tx-markers-on': 0, 'rx-markers-on': 0, 'crc': 1,
                'mulpdu': res['mulpdu'], 'ird': 0, 'ord': 0,
                'tx-fpdus': 0, 'tx-octets': 0, 'rx-fpdus': 1, 'rx-octets': 10,
                'tx-markers': 0, 'rx-markers': 0, 'crc-errors': 1,
                'marker-errors': 0, 'err-code': 'crc', 'err-reason': 'crc',
                'err-errno': errno.EBADMSG})
    eq(e, w, 'error-ntf, code 2')
    eq(lst.consts['error'].entries['crc'].value, 2, 'code of "crc"')
    eq(quiet(lst, 0.5), [], 'nothing more')


@test
def events_error_behind_reply(t):
    """A raw Responder sends its Reply with an FPDU with a wrong CRC right
    behind it, in one segment: the module's Initiator judges the FPDU as
    Full Operation begins, and tells it after that: established-ntf, then
    error-ntf (code 2), never the error of a connection not yet
    established."""
    ns = t.netns()
    lst = listener(t, ns)
    init, raw = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(init, MPA_ROLE_INITIATOR)
    init.setblocking(False)
    try:
        mpa_start(init)
        raise Fail('a non-blocking MPA_START finished at once')
    except BlockingIOError:
        pass
    eq(recv_exact(raw, 20)[:16], b'MPA ID Req Frame', 'Request key')
    reply = b'MPA ID Rep Frame' + bytes([0x40, 1]) + struct.pack('>H', 0)
    raw.sendall(reply + fpdu(b'spoiled behind the Reply', bad_crc=True))
    p = select.poll()
    p.register(init, select.POLLOUT | select.POLLERR)
    check(p.poll(60000), 'the Initiator never finished its startup')
    init.setblocking(True)
    eq(get_u32(init, MPA_STATE), MPA_STATE_FULL, 'MPA_STATE')
    evs = events(lst, 2)
    eq([n for n, _ in evs], ['established-ntf', 'error-ntf'], 'events')
    eq(evs[1][1]['err-code'], 'crc', 'error-ntf code')
    try:
        init.recv(100)
        raise Fail('recv() returned the FPDU with a wrong CRC')
    except OSError as e:
        oserr(e, errno.EBADMSG, 'recv() of the FPDU behind the Reply')
    eq(quiet(lst, 0.5), [], 'nothing more')


@test
def events_closed_with_final_counters(t):
    ns = t.netns()
    conn = mpa_pair(t, ns_i=ns, i_kw={'markers': 1}, r_kw={'markers': 1})
    lst = listener(t, ns)
    xfer(conn, conn.i, [2048, 1])
    xfer(conn, conn.r, [999])
    wi, wr = expect_full(conn, conn.i), expect_full(conn, conn.r)
    conn.i.close()
    eq(events(lst, 1), [('closed-ntf', wi)], 'the Initiator\'s closed-ntf')
    # the Responder saw the FIN: still full, nothing more
    eq(conn.r.recv(10), b'', 'end of stream at the Responder')
    conn.r.close()
    # the FIN after the last whole FPDU: code 1, PEER_CLOSED, errno 0
    wr['err-code'], wr['err-reason'] = 'tcp-closed', 'peer-closed'
    eq(events(lst, 1), [('closed-ntf', wr)], 'the Responder\'s closed-ntf')


@test
def events_closed_by_reset_keep_addresses(t):
    """A Responder that closes while its ULPDU is held (R-7.1.2-15) resets
    the connection itself (tcp_disconnect(), which clears the peer's port,
    and an unbound end's own address): its closed-ntf still names the
    connection as it was, IPv4 and IPv6."""
    for family in (socket.AF_INET, socket.AF_INET6):
        ns = t.netns()
        conn = mpa_pair(t, family=family, ns_i=ns)
        lst = listener(t, ns)
        want = conn_base(conn.r, 'responder', 'full')
        conn.r.send(b'held')
        conn.r.close()
        try:
            conn.i.recv(10)
            raise Fail('recv() after the Responder\'s reset returned')
        except OSError as e:
            oserr(e, errno.ECONNRESET, 'recv() after the Responder\'s reset')
        # the Initiator tells of the reset too (error-ntf)
        evs = [m for n, m in events(lst, 2)
               if n == 'closed-ntf' and m['ino'] == want['ino']]
        eq(len(evs), 1, 'closed-ntf of the Responder')
        got = {k: evs[0].get(k) for k in want}
        eq(got, want, f'closed-ntf of a reset, family {int(family)}')


@test
def events_stay_in_their_netns(t):
    a, b = t.netns(), t.netns()
    la, lb, li = listener(t, a), listener(t, b), listener(t, INIT)
    conn = mpa_pair(t, ns_i=a)
    conn.close()
    garbage_startup(t, a)
    evs = events(la, 5)
    eq(sorted(n for n, _ in evs), ['closed-ntf', 'closed-ntf', 'error-ntf',
                                    'established-ntf', 'established-ntf'],
       'netns A hears its events')
    eq(quiet(lb, 1.0), [], 'netns B hears none')
    mine = {m['ino'] for _, m in evs}
    eq([m for _, m in quiet(li, 0) if m['ino'] in mine], [],
       'the initial netns hears none of them')
    # and the other way round
    conn = mpa_pair(t, ns_i=b)
    eq(sorted(n for n, _ in events(lb, 2)), ['established-ntf'] * 2,
       'netns B hears its own')
    eq(quiet(la, 0.5), [], 'netns A hears none of B\'s')


# --- statistics ---------------------------------------------------------------

def stats_check(fam, ns, want, what, startup=(0, 0, 0)):
    """stats-get and /proc/net/mpa_stat say exactly @want; @startup: the
    connections awaiting a Request, with one received, awaiting a Reply."""
    st = fam.do('stats-get', {})
    got = {k: st[k] for k in STATS_KEYS}
    fails = sorted((f['reason'], f['count']) for f in st.get('failure', []))
    eq((got, fails), (want['stats'], want['failures']), f'{what}: stats-get')
    proc = stats_as_proc(st)
    proc.update(zip(('MpaCurrAwaitRequest', 'MpaCurrRequestReceived',
                     'MpaCurrAwaitReply'), startup))
    eq(proc_stat(ns), proc, f'{what}: /proc/net/mpa_stat')


@test
def stats_count_exactly_what_happened(t):
    ns, other = t.netns(), t.netns()
    fam, fo = t.ynl(ns), t.ynl(other)
    want = {'stats': zero_stats(), 'failures': []}
    stats_check(fam, ns, want, 'a new netns')
    s = want['stats']

    def add(**kw):
        for k, v in kw.items():
            s[k.replace('_', '-')] += v

    # A: Markers both ways, left open
    ca = mpa_pair(t, ns_i=ns, i_kw={'markers': 1}, r_kw={'markers': 1})
    xfer(ca, ca.i, [1, 100, 1000, 5000])
    xfer(ca, ca.r, [7, 600])
    wa = [expect_full(ca, ca.i), expect_full(ca, ca.r)]
    add(attached=2, established=2, conns_full=2)
    for k in COUNTERS:
        add(**{k.replace('-', '_'): wa[0][k] + wa[1][k]})
    stats_check(fam, ns, want, 'one connection with traffic')

    # B: no Markers, closed after its traffic: its counters stay
    cb = mpa_pair(t, ns_i=ns)
    xfer(cb, cb.i, [300])
    xfer(cb, cb.r, [20])
    cb.close()
    add(attached=2, established=2, tx_fpdus=2, tx_octets=320, rx_fpdus=2,
        rx_octets=320)
    stats_check(fam, ns, want, 'a closed connection')

    # C: rejected, left open (both ends count)
    cc = mpa_pair(t, ns_i=ns, reject=True)
    add(attached=2, rejected=2, conns_rejected=2)
    stats_check(fam, ns, want, 'a rejected startup')

    # D: a garbage Request: a startup failure, with its reason
    graw, gresp = garbage_startup(t, ns)
    add(attached=1, startup_failed=1, conns_failed=1)
    want['failures'] = [('bad-key', 1)]
    stats_check(fam, ns, want, 'a failed startup')

    # E: a CRC error after one good FPDU
    eraw, eresp = crc_error(t, ns)
    add(attached=1, established=1, conns_full=1, rx_fpdus=1, rx_octets=10,
        crc_errors=1)
    stats_check(fam, ns, want, 'a CRC error')

    # a second garbage Request of the same cause, closed at once
    _, g2 = garbage_startup(t, ns)
    g2.close()
    add(attached=1, startup_failed=1)
    want['failures'] = [('bad-key', 2)]
    stats_check(fam, ns, want, 'two failed startups')

    # nothing of it in another netns
    stats_check(fo, other, {'stats': zero_stats(), 'failures': []},
                'the other netns')

    # everything closed: the totals stay, the current counts go to 0
    for x in (ca, cc):
        x.close()
    for x in (graw, gresp, eraw, eresp):
        x.close()
    eq(dump(fam), [], 'connections left')
    for k in ('conns-full', 'conns-rejected', 'conns-failed'):
        s[k] = 0
    stats_check(fam, ns, want, 'all closed')


@test
def stats_walk_in_batches(t):
    """More connections than the statistics walk sums in one batch (64,
    mpa/netns.c): the totals are exact. Then they close while stats-get
    and /proc/net/mpa_stat are read again and again: a walk drops its lock
    between batches, and still every read counts each FPDU once, whether
    its connection closed before the walk reached it or after."""
    ns = t.netns()
    fam = t.ynl(ns)
    conns = [mpa_pair(t, ns_i=ns) for _ in range(70)]
    for k, c in enumerate(conns):
        xfer(c, c.i, [k + 1, 3])
    n, octets = 2 * len(conns), sum(k + 4 for k in range(len(conns)))
    want = dict(zero_stats(), **{
        'conns-full': n, 'attached': n, 'established': n,
        'tx-fpdus': 2 * len(conns), 'tx-octets': octets,
        'rx-fpdus': 2 * len(conns), 'rx-octets': octets})
    st = fam.do('stats-get', {})
    eq({k: st[k] for k in STATS_KEYS}, want, f'{n} connections: stats-get')
    traffic = ('tx-fpdus', 'tx-octets', 'rx-fpdus', 'rx-octets')
    proc_names = {k: 'Mpa' + ''.join(w.capitalize() for w in k.split('-'))
                  for k in traffic}

    def closer():
        for c in conns:
            c.close()

    th = threading.Thread(target=closer)
    th.start()
    reads = 0
    while th.is_alive() or reads < 2:
        cur = fam.do('stats-get', {})
        proc = proc_stat(ns)
        for k in traffic:
            eq((cur[k], proc[proc_names[k]]), (want[k], want[k]),
               f'read {reads}, {k}: stats-get, /proc')
        reads += 1
    th.join()
    diag(f'{reads} reads while {n} connections closed')
    want['conns-full'] = 0
    st = fam.do('stats-get', {})
    eq({k: st[k] for k in STATS_KEYS}, want, 'all closed: stats-get')


@test
def stats_startup_states_and_timeout(t):
    """Connections in each state of the startup phase are counted as such,
    and the namespace's timeout ends one with reason timeout (code 4)."""
    ns = t.netns()
    fam = t.ynl(ns)
    lst = listener(t, ns)
    want = {'stats': zero_stats(), 'failures': []}
    s = want['stats']
    ci, cr = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    attach(ci, MPA_ROLE_INITIATOR)
    attach(cr, MPA_ROLE_RESPONDER)
    s.update({'attached': 2, 'conns-streaming': 2})
    stats_check(fam, ns, want, 'two attached')
    cr.setblocking(False)
    try:
        mpa_start(cr)
        raise Fail('the Responder\'s MPA_START finished without a Request')
    except BlockingIOError:
        pass
    s.update({'conns-streaming': 1, 'conns-startup': 1})
    stats_check(fam, ns, want, 'a Responder waiting', startup=(1, 0, 0))
    ci.setblocking(False)
    try:
        mpa_start(ci)
        raise Fail('the Initiator\'s MPA_START finished at once')
    except BlockingIOError:
        pass
    p = select.poll()
    p.register(cr, select.POLLIN)
    check(p.poll(60000), 'the Request never arrived')
    s.update({'conns-streaming': 0, 'conns-startup': 2})
    stats_check(fam, ns, want, 'a Request received, a Reply awaited',
                startup=(0, 1, 1))
    cr.setblocking(True)
    cr.setsockopt(SOL_MPA, MPA_ACCEPT, None, 0)
    p = select.poll()
    p.register(ci, select.POLLOUT)
    check(p.poll(60000), 'the Reply never arrived')
    s.update({'conns-startup': 0, 'conns-full': 2, 'established': 2})
    stats_check(fam, ns, want, 'both in Full Operation')
    eq(sorted(n for n, _ in events(lst, 2)), ['established-ntf'] * 2,
       'events so far')

    # the policy's timeout: a Responder whose peer never sends a Request
    fam.do('policy-set', {'timeout-ms': 300})
    raw, resp = raw_to_responder(t, ns)
    eq(get_u32(resp, MPA_TIMEOUT), 300, 'MPA_TIMEOUT from the policy')
    try:
        mpa_start(resp)
        raise Fail('MPA_START without a Request succeeded')
    except OSError as e:
        oserr(e, errno.ETIMEDOUT, 'MPA_START without a Request')
    s.update({'attached': 3, 'startup-failed': 1, 'conns-failed': 1})
    want['failures'] = [('timeout', 1)]
    stats_check(fam, ns, want, 'a startup timed out')
    w = dict(conn_base(resp, 'responder', 'failed'),
             **{k: 0 for k in COUNTERS},
             **{'err-code': 'startup', 'err-reason': 'timeout',
                'err-errno': errno.ETIMEDOUT})
    eq(events(lst, 1), [('error-ntf', w)], 'error-ntf of the timeout')
    eq(raw.recv(10), b'', 'the Responder closed TCP (FIN)')


@test
def events_error_tcp_closed(t):
    """A Request cut short by the peer's FIN: an invalid frame, code 4
    (TRUNCATED, EPROTO); and error code 1: Full Operation ended by a reset
    (PEER_CLOSED, ECONNRESET)."""
    ns = t.netns()
    lst = listener(t, ns)
    raw, resp = raw_to_responder(t, ns)
    # its addresses before it is closed (getpeername() fails then)
    base = conn_base(resp, 'responder', 'failed')
    raw.sendall(request_frame()[:10])
    raw.shutdown(socket.SHUT_WR)
    try:
        mpa_start(resp)
        raise Fail('MPA_START on half a Request succeeded')
    except OSError as e:
        oserr(e, errno.EPROTO, 'MPA_START on half a Request and a FIN')
    w = dict(base, **{k: 0 for k in COUNTERS},
             **{'err-code': 'startup', 'err-reason': 'truncated',
                'err-errno': errno.EPROTO})
    eq(events(lst, 1), [('error-ntf', w)], 'error-ntf of the truncation')
    eq(lst.consts['error'].entries['tcp-closed'].value, 1,
       'code of "tcp-closed"')

    raw, resp = raw_to_responder(t, ns)
    raw.sendall(request_frame())
    mpa_start(resp)
    resp.setsockopt(SOL_MPA, MPA_ACCEPT, None, 0)
    recv_exact(raw, 20)
    raw.sendall(fpdu(b'last words'))
    eq(recv_ulpdu(resp), b'last words', 'the FPDU before the reset')
    base = conn_base(resp, 'responder', 'full')
    res = mpa_result(resp)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))
    raw.close()                             # a reset
    try:
        resp.recv(100)
        raise Fail('recv() after the reset returned')
    except OSError as e:
        oserr(e, errno.ECONNRESET, 'recv() after the reset')
    evs = events(lst, 2)
    eq([n for n, _ in evs], ['established-ntf', 'error-ntf'], 'events')
    w = dict(base,
             **{'rev': 1, 'tx-markers-on': 0, 'rx-markers-on': 0, 'crc': 1,
                'mulpdu': res['mulpdu'], 'ird': 0, 'ord': 0,
                'tx-fpdus': 0, 'tx-octets': 0, 'rx-fpdus': 1, 'rx-octets': 10,
                'tx-markers': 0, 'rx-markers': 0, 'crc-errors': 0,
                'marker-errors': 0, 'err-code': 'tcp-closed',
                'err-reason': 'peer-closed', 'err-errno': errno.ECONNRESET})
    eq(evs[1][1], w, 'error-ntf of the reset')


@test
def dump_many_connections_in_parts(t):
    """A dump larger than one message buffer: every connection once, in
    the order they were attached."""
    ns = t.netns()
    fam = t.ynl(ns)
    conns = [mpa_pair(t, ns_i=ns) for _ in range(40)]
    want = [x for c in conns for x in (ino(c.i), ino(c.r))]
    got = [c['ino'] for c in dump(fam)]
    eq(got, want, 'inodes of the 80 connections, in order')
    # read with the smallest buffer YNL allows: more parts still
    with ns:
        small = YnlFamily(SPEC, '', recv_size=4000)
    t.later(small.sock.close)
    eq([c['ino'] for c in small.dump('conn-get', {})], want,
       'the same with 4000-octet reads')
    rc, out, err = mpactl(ns, 'conns')
    eq((rc, len(out.splitlines())), (0, 80), 'mpactl conns: 80 lines')


# --- the family's own rules ---------------------------------------------------

@test
def policy_set_needs_uns_admin_perm(t):
    """POLICY_SET's permission is the family's (GENL_UNS_ADMIN_PERM, from
    the spec's flags): the kernel's ops table says so; reading needs none."""
    with INIT:
        ctrl = YnlFamily(NLCTRL, '')
    t.later(ctrl.sock.close)
    fam = t.ynl()
    info = ctrl.do('getfamily', {'family-name': 'mpa'})
    # an indexed-array: [{index: {'id': cmd, 'flags': {...}}}, ...]
    ops = [op for item in info['ops'] for op in item.values()]
    flags = {op['id']: set(op.get('flags', ())) for op in ops}
    want = {'policy-get': set(), 'policy-set': {'uns-admin-perm'},
            'conn-get': set(), 'stats-get': set()}
    for name, perm in want.items():
        got = flags[fam.msgs[name].req_value]
        eq(got & {'admin-perm', 'uns-admin-perm'}, perm,
           f'permission flags of {name}')


def raw_dump_parts(fam, ns, between=None, bufsize=4096):
    """CONN_GET as a raw dump on a netlink socket in @ns, read in
    @bufsize reads; @between() runs after the first read. Returns the
    messages: (nlmsg_type, nlmsg_flags, payload)."""
    with ns:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW,
                          NETLINK_GENERIC)
    try:
        s.bind((0, 0))
        cmd = fam.msgs['conn-get'].req_value
        genl = struct.pack('BBH', cmd, 1, 0)
        hdr = struct.pack('=IHHII', 16 + len(genl), fam.nlproto.family_id,
                          0x1 | 0x300, 1, 0)   # NLM_F_REQUEST | NLM_F_DUMP
        s.send(hdr + genl)
        msgs, first, done = [], True, False
        while not done:
            data = s.recv(bufsize)
            if first and between:
                between()
            first = False
            off = 0
            while off + 16 <= len(data):
                ln, typ, flags, _, _ = struct.unpack_from('=IHHII', data, off)
                msgs.append((typ, flags, data[off + 16:off + ln]))
                if typ in (2, 3):           # NLMSG_ERROR, NLMSG_DONE
                    done = True
                off += (ln + 3) & ~3
        return msgs
    finally:
        s.close()


NLM_F_DUMP_INTR = 0x10
NETLINK_GENERIC = 16


@test
def dump_interrupted_by_a_change(t):
    """A dump that resumes after the namespace's connections changed says
    so (NLM_F_DUMP_INTR); an undisturbed one does not."""
    ns = t.netns()
    fam = t.ynl(ns)
    for _ in range(30):
        mpa_pair(t, ns_i=ns)
    msgs = raw_dump_parts(fam, ns)
    eq(sum(1 for m in msgs if m[0] == fam.nlproto.family_id), 60,
       'connections in an undisturbed dump')
    eq([m for m in msgs if m[1] & NLM_F_DUMP_INTR], [],
       'DUMP_INTR in an undisturbed dump')

    a, b = tcp_pair(t, socket.AF_INET, ns, ns, '127.0.0.1')
    msgs = raw_dump_parts(fam, ns, lambda: attach(a, MPA_ROLE_INITIATOR))
    # the first message built after the change says so (netlink flags
    # NLMSG_DONE only if nothing else came after the change)
    eq(msgs[-1][0], 3, 'the dump ends with NLMSG_DONE')
    check([m for m in msgs if m[1] & NLM_F_DUMP_INTR],
          'no message of the dump after the change says DUMP_INTR')

    # a connection going away interrupts a dump as well
    msgs = raw_dump_parts(fam, ns, a.close)
    check([m for m in msgs if m[1] & NLM_F_DUMP_INTR],
          'no message of a dump across a close says DUMP_INTR')


@test
def no_attribute_zero_as_padding(t):
    """No 64-bit attribute needs padding: the spec has no u64 attribute
    without a pad attribute in its set, and the module passes no pad type
    0 to nla_put_u64_64bit(); the dump decodes every attribute."""
    import yaml  # pylint: disable=import-outside-toplevel
    with open(SPEC, encoding='utf-8') as f:
        spec = yaml.safe_load(f)
    for aset in spec['attribute-sets']:
        types = {a['name']: a['type'] for a in aset['attributes']}
        u64 = [n for n, ty in types.items() if ty in ('u64', 's64')]
        pads = [n for n, ty in types.items() if ty == 'pad']
        eq((aset['name'], u64 if not pads else []), (aset['name'], []),
           'u64 attributes of a set without a pad attribute')
    srcs = [os.path.join(TOP, 'mpa', f) for f in os.listdir(os.path.join(TOP, 'mpa'))
            if f.endswith('.c')]
    bad = []
    for path in srcs:
        with open(path, encoding='utf-8') as f:
            text = f.read()
        k = text.find('nla_put_u64_64bit(')
        while k >= 0:
            # the call's arguments, to its closing parenthesis
            depth, end = 0, k
            for end in range(k, len(text)):
                depth += {'(': 1, ')': -1}.get(text[end], 0)
                if text[end] == ')' and not depth:
                    break
            args = text[k + len('nla_put_u64_64bit('):end].split(',')
            if args[-1].strip() == '0':
                bad.append(f'{os.path.basename(path)}: {text[k:end + 1]}')
            k = text.find('nla_put_u64_64bit(', end)
    eq(bad, [], 'nla_put_u64_64bit() with padding type 0')
    ns = t.netns()
    fam = t.ynl(ns)
    conn = mpa_pair(t, ns_i=ns)
    got = by_ino(dump(fam))
    eq(sorted(got), sorted([ino(conn.i), ino(conn.r)]), 'inodes in the dump')


# === main ====================================================================

def on_alarm(signum, frame):
    raise Fail('timed out')


def main(argv):
    tests = [f for f in TESTS if not argv or f.__name__ in argv]
    signal.signal(signal.SIGALRM, on_alarm)
    print(f'1..{len(tests)}', flush=True)
    failed = 0
    for k, fn in enumerate(tests, 1):
        t = T()
        ok = True
        start = time.monotonic()
        signal.alarm(300)
        try:
            fn(t)
        except Exception as e:  # pylint: disable=broad-except
            ok = False
            if isinstance(e, Fail):
                diag(f'{fn.__name__}: {e}')
                diag(''.join(traceback.format_tb(e.__traceback__)[-2:]))
            else:
                diag(''.join(traceback.format_exception(type(e), e,
                                                        e.__traceback__)))
        finally:
            signal.alarm(0)
        for err in t.cleanup():
            ok = False
            diag(f'{fn.__name__}: {err}')
        diag(f'{fn.__name__}: {time.monotonic() - start:.1f} s')
        print(f'{"ok" if ok else "not ok"} {k} {fn.__name__}', flush=True)
        failed += not ok
    if YNL_COPY:
        shutil.rmtree(YNL_COPY)
    diag(f'{len(tests) - failed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
