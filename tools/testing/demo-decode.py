#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Decode make demo's capture with tshark and check it.

usage: demo-decode.py RESULTS_DIR

RESULTS_DIR is what demo-guest.sh left: demo.pcap, and for the Initiator
and the Responder the mpacat -v logs (*.err) and the ULPDUs each sent
(*.sent: "N: LEN octets, crc32c 0x..."). Prints tshark's view of every MPA
PDU and exits non-zero unless tshark decoded the MPA Request and Reply
(both with M=1 and C=1) and, each way, one FPDU per ULPDU sent, with the
ULPDU lengths in the order mpacat sent them, each with "Good CRC32", as
many Markers as MPA_STATS counted, and nothing else in the stream.
"""
import os
import re
import sys

import mpa_tshark

# the ULPDUs are text, not DDP/RDMAP
NO_DDP = ["--disable-protocol", "iwarp_ddp_rdmap"]

failures = []


def fail(text):
    failures.append(text)
    print(f"FAILED: {text}")


def lines(path):
    """The lines of a file the guest left, none if it left no such file."""
    try:
        with open(path) as f:
            return f.readlines()
    except OSError:
        return []


def read_sent(path):
    """ULPDU lengths from mpacat -v's 'sent ULPDU N: LEN octets' lines."""
    return [int(m.group(1)) for m in
            (re.match(r"\d+: (\d+) octets", line) for line in lines(path))
            if m]


def read_markers_sent(path):
    for line in lines(path):
        m = re.search(r"summary: Markers sent (\d+)", line)
        if m:
            return int(m.group(1))
    return None


def read_initiator(path):
    """The Initiator's address from mpacat's 'connected: A:P -> B:Q'."""
    for line in lines(path):
        m = re.search(r"connected: \[?([0-9a-fA-F.:]+?)\]?:(\d+) ->", line)
        if m:
            return m.group(1), m.group(2)
    return None, None


def frame_text(f):
    text = f["pd"].decode("ascii", "replace")
    return (f"Rev {f['rev']} M={f['m']} C={f['c']} R={f['r']} "
            f"PD_Length {f['pd_length']} \"{text}\"",
            f["m"] == 1 and f["c"] == 1 and f["r"] == 0)


def main():
    res = sys.argv[1]
    pcap = os.path.join(res, "demo.pcap")
    ini_addr, ini_port = read_initiator(os.path.join(res, "initiator.err"))
    if not ini_addr:
        print("FAILED: no 'connected:' line in initiator.err")
        return 1
    sides = {"Initiator": {}, "Responder": {}}
    for name, side in sides.items():
        base = os.path.join(res, name.lower())
        side["sent"] = read_sent(base + ".sent")
        side["markers_sent"] = read_markers_sent(base + ".err")
        side["fpdus"] = []
        side["markers"] = 0
        side["frames"] = []
        side["octets"] = 0      # wire octets of the startup frame and FPDUs
        side["stream"] = 0      # TCP payload octets, from the sequence numbers

    try:
        root = mpa_tshark.pdml(pcap, NO_DDP)
    except RuntimeError as e:
        print(f"FAILED: {e}")
        return 1

    print(f"{'frame':>5}  {'direction':<22} {'MPA':<8} "
          f"{'ULPDU_Length':>12}  {'Markers':>7}  CRC")
    malformed = 0
    for pkt in mpa_tshark.packets(root):
        num = pkt["num"]
        who = "Initiator" if (pkt["src"], pkt["sport"]) == \
            (ini_addr, ini_port) else "Responder"
        side = sides[who]
        arrow = "Initiator -> Responder" if who == "Initiator" else \
            "Responder -> Initiator"
        if pkt["tlen"]:
            side["stream"] = max(side["stream"],
                                 pkt["seq"] - 1 + pkt["tlen"])
        malformed += pkt["malformed"]
        nmark = pkt["markers"]
        for pdu in pkt["pdus"]:
            if pdu["kind"] != "FPDU":
                text, ok = frame_text(pdu)
                print(f"{num:>5}  {arrow:<22} {pdu['kind']:<8} {text}")
                side["frames"].append((pdu["kind"], ok))
                side["octets"] += 20 + pdu["pd_length"]
                continue
            length = pdu["length"]
            verdict = pdu["crc"] or "no CRC check"
            print(f"{num:>5}  {arrow:<22} {'FPDU':<8} {length:>12}  "
                  f"{nmark:>7}  {verdict}")
            side["fpdus"].append((num, length, verdict))
            side["octets"] += mpa_tshark.fpdu_octets(length)
        side["markers"] += nmark
        side["octets"] += 4 * nmark

    print()
    for who, want in (("Initiator", "Request"), ("Responder", "Reply")):
        frames = sides[who]["frames"]
        if [f[0] for f in frames] != [want]:
            fail(f"the {who}'s startup frames as decoded: "
                 f"{[f[0] for f in frames]}, not one {want}")
        elif not frames[0][1]:
            fail(f"the {who}'s {want} does not say M=1 C=1 R=0")
        else:
            print(f"ok: tshark decoded the {who}'s MPA {want}, M=1 C=1")
    if malformed:
        fail(f"tshark found {malformed} malformed packets")

    for who, side in sides.items():
        peer = "Responder" if who == "Initiator" else "Initiator"
        lengths = [f[1] for f in side["fpdus"]]
        good = sum(1 for f in side["fpdus"] if f[2] == "Good CRC32")
        n = len(side["sent"])
        if not n:
            fail(f"the {who} sent no ULPDUs")
        if lengths != side["sent"]:
            fail(f"{who} -> {peer}: tshark's FPDUs have ULPDU_Length "
                 f"{lengths}; mpacat sent {side['sent']}")
        else:
            print(f"ok: {who} -> {peer}: {n} FPDUs decoded, one per ULPDU "
                  f"sent, ULPDU_Length {' '.join(map(str, lengths))}")
        if good != len(lengths) or not lengths:
            bad = [f for f in side["fpdus"] if f[2] != "Good CRC32"]
            fail(f"{who} -> {peer}: {len(bad)} FPDUs without Good CRC32: "
                 f"{bad[:5]}")
        else:
            print(f"ok: {who} -> {peer}: Good CRC32 on all {good} FPDUs")
        if side["markers"] != side["markers_sent"]:
            fail(f"{who} -> {peer}: tshark found {side['markers']} Markers, "
                 f"MPA_STATS says {side['markers_sent']} were sent")
        else:
            print(f"ok: {who} -> {peer}: {side['markers']} Markers, as many "
                  f"as MPA_STATS counted")
        if side["octets"] != side["stream"]:
            fail(f"{who} -> {peer}: the decoded startup frame and FPDUs "
                 f"cover {side['octets']} octets of a {side['stream']}-octet "
                 f"stream")
        else:
            print(f"ok: {who} -> {peer}: they cover all {side['stream']} "
                  f"octets the {who} sent")

    if failures:
        print(f"demo: FAILED: {len(failures)} check(s) of the capture failed")
        return 1
    return 0


sys.exit(main())
