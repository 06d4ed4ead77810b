#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Decode the interop suite's captures with tshark and write its TAP.

usage: interop-decode.py INTEROP_DIR

INTEROP_DIR is what interop-suite.sh left in the guest's results: "plan"
(the cases, in order) and a folder per case with capture.pcap, "expect"
and "guest.result". For each case, tshark (with the DDP/RDMAP dissector)
must have decoded, from the capture alone:
  - the Initiator's MPA Request and the Responder's Reply, once each, with
    the Rev, M, C, R, E (RFC 6581) and PD_Length of "expect";
  - each way, the FPDUs of "expect" in order: DDP/RDMAP headers (an
    untagged Send's QN, MSN, MO and payload length, a tagged Write, a
    Terminate) and nothing else;
  - "Good CRC32" on every FPDU where CRC is on; where it is off, no CRC
    check, and a zero CRC field in every FPDU, siw's and ours (neither
    computes one: requirements A10);
  - no Markers, nothing malformed, and the startup frame and FPDUs
    covering every octet each side sent.
A case passes when that holds and every check the guest made passed.
Writes INTEROP_DIR/interop.tap (one test per case, "# FAIL: ..." lines
saying why) and prints tshark's view of each case.
"""
import os
import sys

import mpa_tshark

SIW = "10.0.0.1"


def read_expect(path):
    exp = {}
    with open(path) as f:
        for line in f:
            key, _, val = line.rstrip("\n").partition("=")
            exp[key] = val
    return exp


def frame_spec(text):
    """ "rev=2 m=0 c=1 r=0 pd_length=4" as a dict of ints."""
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split())}


def fpdu_spec(pdu):
    """An FPDU as the suite's expect file writes it: send:QN:MSN:MO:LEN,
    write:LEN, terminate:QN:MSN:MO:LAYER.TYPE.CODE, or what else it was."""
    d = pdu["ddp"]
    if d is None:
        return f"not-ddp:{pdu['length']}"
    payload = pdu["length"] - d["header"]
    op = mpa_tshark.OPCODES.get(d["opcode"], f"opcode{d['opcode']}")
    if op == "send" and not d["tagged"] and d["last"]:
        return f"send:{d['qn']}:{d['msn']}:{d['mo']}:{payload}"
    if op == "write" and d["tagged"] and d["last"]:
        return f"write:{payload}"
    if op == "terminate" and not d["tagged"] and d["last"]:
        return (f"terminate:{d['qn']}:{d['msn']}:{d['mo']}:"
                f"{d['term_layer']}.{d['term_etype']}.{d['term_errcode']}")
    return f"{op}{'-tagged' if d['tagged'] else ''}:{payload}"


def describe(pdu):
    if pdu["kind"] != "FPDU":
        return (f"{pdu['kind']:<8} Rev {pdu['rev']} M={pdu['m']} "
                f"C={pdu['c']} R={pdu['r']} Res 0x{pdu['res']:x} "
                f"PD_Length {pdu['pd_length']} PD {pdu['pd'].hex()}")
    d = pdu["ddp"]
    crc = pdu["crc"] or f"CRC not checked, field 0x{pdu['crc_field']:08x}"
    text = f"FPDU     ULPDU_Length {pdu['length']:>5}  {crc}"
    if d:
        text += f"  {fpdu_spec(pdu)}"
    return text


def check_case(case, cdir):
    """The failures of one case (an empty list: it passed)."""
    fails = []
    gres = os.path.join(cdir, "guest.result")
    if not os.path.exists(gres):
        return ["the guest did not run this case"]
    with open(gres) as f:
        glines = [line.rstrip("\n") for line in f if line.strip()]
    if not glines:
        fails.append("the guest made no checks")
    fails += [g[len("FAIL: "):] + " (guest)" for g in glines
              if not g.startswith("ok: ")]

    exp = read_expect(os.path.join(cdir, "expect"))
    pcap = os.path.join(cdir, "capture.pcap")
    try:
        root = mpa_tshark.pdml(pcap)
    except (RuntimeError, OSError) as e:
        return fails + [f"tshark: {e}"]

    ini = exp.get("initiator")
    sides = {w: {"frames": [], "fpdus": [], "octets": 0, "stream": 0}
             for w in ("Initiator", "Responder")}
    malformed = markers = 0
    for pkt in mpa_tshark.packets(root):
        who = "Initiator" if pkt["src"] == ini else "Responder"
        side = sides[who]
        if pkt["tlen"]:
            side["stream"] = max(side["stream"], pkt["seq"] - 1 + pkt["tlen"])
        malformed += pkt["malformed"]
        markers += pkt["markers"]
        for pdu in pkt["pdus"]:
            arrow = "I->R" if who == "Initiator" else "R->I"
            sender = "siw" if pkt["src"] == SIW else "mpa"
            print(f"  {pkt['num']:>4} {arrow} {sender:<3} {describe(pdu)}")
            if pdu["kind"] == "FPDU":
                side["fpdus"].append((pdu, pkt["src"]))
                side["octets"] += mpa_tshark.fpdu_octets(pdu["length"])
            else:
                side["frames"].append(pdu)
                side["octets"] += 20 + pdu["pd_length"]

    if malformed:
        fails.append(f"tshark found {malformed} malformed packets")
    if markers:
        fails.append(f"tshark found {markers} Markers")
    crc_on = exp.get("crc") == "on"
    for who, key, want_kind in (("Initiator", "request", "Request"),
                                ("Responder", "reply", "Reply")):
        side = sides[who]
        kinds = [f["kind"] for f in side["frames"]]
        if kinds != [want_kind]:
            fails.append(f"the {who}'s startup frames as decoded: {kinds}, "
                         f"not one {want_kind}")
        else:
            got = {k: side["frames"][0][k] for k in frame_spec(exp[key])}
            if got != frame_spec(exp[key]):
                fails.append(f"the {want_kind}: {got}, expected "
                             f"{frame_spec(exp[key])}")
        want = exp.get(key.replace("request", "initiator").replace(
            "reply", "responder") + "_fpdus", "").split()
        got = [fpdu_spec(p) for p, _ in side["fpdus"]]
        if got != want:
            fails.append(f"{who}'s FPDUs as decoded: {got or 'none'}, "
                         f"expected {want or 'none'}")
        for pdu, src in side["fpdus"]:
            if crc_on and pdu["crc"] != "Good CRC32":
                fails.append(f"{who}'s FPDU of {pdu['length']} octets: "
                             f"{pdu['crc'] or 'CRC not checked'}, not "
                             "Good CRC32")
            if not crc_on and pdu["crc"] is not None:
                fails.append(f"{who}'s FPDU of {pdu['length']} octets: "
                             f"tshark checked its CRC ({pdu['crc']}) with "
                             "CRC off")
            if not crc_on and pdu["crc_field"] != 0:
                fails.append(f"{'siw' if src == SIW else 'mpa'}'s FPDU of "
                             f"{pdu['length']} octets has CRC field "
                             f"0x{pdu['crc_field'] or 0:08x} with CRC off")
        if side["octets"] != side["stream"]:
            fails.append(f"{who}: the decoded startup frame and FPDUs cover "
                         f"{side['octets']} octets of a {side['stream']}-"
                         "octet stream")
    return fails


def main():
    idir = sys.argv[1]
    tap = []
    try:
        with open(os.path.join(idir, "plan")) as f:
            cases = f.read().split()
    except OSError:
        cases = []
    tap.append(f"1..{max(len(cases), 1)}")
    if not cases:
        tap.append("not ok 1 interop plan")
        tap.append("# FAIL: the guest wrote no plan (did it run?)")
    for n, case in enumerate(cases, 1):
        print(f"== {case}")
        fails = check_case(case, os.path.join(idir, case))
        for text in fails:
            print(f"  FAILED: {text}")
        if not fails:
            print("  ok: the guest's checks and tshark's decode")
        tap.append(f"{'not ok' if fails else 'ok'} {n} {case}")
        tap += [f"# FAIL: {text}" for text in fails]
    with open(os.path.join(idir, "interop.tap"), "w") as f:
        f.write("\n".join(tap) + "\n")
    return 0 if all(not line.startswith("not ok") for line in tap) else 1


sys.exit(main())
