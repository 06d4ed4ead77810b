# SPDX-License-Identifier: GPL-2.0
"""tshark's view of MPA captures, for the test scripts (demo-decode.py,
interop-decode.py): run tshark over a capture and list, packet by packet,
the MPA Requests, Replies and FPDUs it decoded, with the DDP/RDMAP header
of each FPDU when the DDP dissector is on.

Wireshark finds MPA by its heuristic only (there is no Decode-As for it);
its dissector knows Rev 1 framing, so a Rev 2 frame's IRD/ORD block shows
as the first 4 octets of the Private Data and its E flag as "Reserved"
(interop-facts.md, section 2).
"""
import re
import subprocess
import xml.etree.ElementTree as ET

TSHARK = [
    "tshark", "-n",
    "--enable-heuristic", "iwarp_mpa_tcp",
    # RPC-over-RDMA's heuristic takes other payloads for its own
    "--disable-protocol", "rpcordma",
]

# RDMAP opcodes (RFC 5040, 4.3)
OPCODES = {0: "write", 1: "read-request", 2: "read-response", 3: "send",
           4: "send-inv", 5: "send-se", 6: "send-se-inv", 7: "terminate"}


def fields(elem, name):
    return [f for f in elem.iter("field") if f.get("name") == name]


def first(elem, name, attr="show"):
    found = fields(elem, name)
    return found[0].get(attr) if found else None


def pdml(pcap, extra=()):
    """tshark's PDML of @pcap as an ElementTree root; raises RuntimeError
    with tshark's complaint if it failed."""
    out = subprocess.run(TSHARK + list(extra) + ["-r", pcap, "-T", "pdml"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         check=False)
    if out.returncode:
        raise RuntimeError(f"tshark exited with {out.returncode}: "
                           f"{out.stderr.decode(errors='replace').strip()}")
    return ET.fromstring(out.stdout)


def _int(text, default=None):
    if text is None:
        return default
    return int(text, 0)


def startup_frame(fi, kind):
    """A Request or Reply field of the PDML as a dict."""
    pd = first(fi, "iwarp_mpa.privatedata", "value") or ""
    return {
        "kind": kind,
        "rev": _int(first(fi, "iwarp_mpa.rev")),
        "m": _int(first(fi, "iwarp_mpa.marker_flag")),
        "c": _int(first(fi, "iwarp_mpa.crc_flag")),
        "r": _int(first(fi, "iwarp_mpa.rej_flag")),
        "res": _int(first(fi, "iwarp_mpa.res"), 0),
        # RFC 6581's E bit, the first of what Rev 1 calls Res
        "e": _int(first(fi, "iwarp_mpa.res"), 0) >> 4 & 1,
        "pd_length": _int(first(fi, "iwarp_mpa.pdlength")),
        "pd": bytes.fromhex(pd),
    }


def _ddp(proto):
    """The DDP/RDMAP header of an iwarp_ddp_rdmap proto element."""
    tagged = first(proto, "iwarp_ddp.tagged_flag") == "1"
    d = {
        "tagged": tagged,
        "last": first(proto, "iwarp_ddp.last_flag") == "1",
        "opcode": _int(first(proto, "iwarp_rdma.opcode")),
        "header": int(proto.get("size")),
    }
    if tagged:
        d["stag"] = _int(first(proto, "iwarp_ddp.stag"))
        d["to"] = _int(first(proto, "iwarp_ddp.tagged_offset"))
    else:
        d["qn"] = _int(first(proto, "iwarp_ddp.qn"))
        d["msn"] = _int(first(proto, "iwarp_ddp.msn"))
        d["mo"] = _int(first(proto, "iwarp_ddp.mo"))
    if d["opcode"] == 7:
        d["term_layer"] = _int(first(proto, "iwarp_rdma.term_layer"))
        d["term_etype"] = _int(
            first(proto, "iwarp_rdma.term_etype_ddp") or
            first(proto, "iwarp_rdma.term_etype_llp") or
            first(proto, "iwarp_rdma.term_etype_rdma"))
        d["term_errcode"] = _int(first(proto, "iwarp_rdma.term_errcode"))
    return d


def packets(root):
    """Yield, for each IP packet of the capture, a dict: frame number,
    source address and port, TCP sequence number and payload length, how
    many malformed-packet marks tshark gave it, and "pdus": its MPA PDUs in
    order. A PDU is a startup frame (startup_frame()) or an FPDU:
    {"kind": "FPDU", "length": ULPDU_Length, "crc": the CRC verdict
    ("Good CRC32", "Bad CRC32, should be ...") or None when tshark did not
    check it, "crc_field": the CRC field when it did not, "ddp": the
    DDP/RDMAP header (_ddp()) when that dissector ran}. "markers" counts
    the packet's Markers."""
    for pkt in root.iter("packet"):
        src = first(pkt, "ip.src") or first(pkt, "ipv6.src")
        sport = first(pkt, "tcp.srcport")
        if src is None or sport is None:
            continue
        p = {
            "num": first(pkt, "frame.number"),
            "src": src,
            "sport": sport,
            "seq": int(first(pkt, "tcp.seq") or 0),
            "tlen": int(first(pkt, "tcp.len") or 0),
            "malformed": len(fields(pkt, "_ws.malformed")),
            "markers": 0,
            "pdus": [],
        }
        for proto in pkt.iter("proto"):
            name = proto.get("name")
            if name == "iwarp_ddp_rdmap":
                if p["pdus"] and p["pdus"][-1]["kind"] == "FPDU":
                    p["pdus"][-1]["ddp"] = _ddp(proto)
                continue
            if name != "iwarp_mpa":
                continue
            for kind, label in (("req", "Request"), ("rep", "Reply")):
                for fi in fields(proto, "iwarp_mpa." + kind):
                    p["pdus"].append(startup_frame(fi, label))
            p["markers"] += len(fields(proto, "iwarp_mpa.marker_fpduptr"))
            for fpdu in fields(proto, "iwarp_mpa.fpdu"):
                check = first(fpdu, "iwarp_mpa.crc_check", "showname")
                verdict = None
                if check:
                    m = re.search(r"\((.*)\)", check)
                    verdict = m.group(1) if m else check
                p["pdus"].append({
                    "kind": "FPDU",
                    "length": _int(first(fpdu, "iwarp_mpa.ulpdulength"), -1),
                    "crc": verdict,
                    "crc_field": _int(first(fpdu, "iwarp_mpa.crc")),
                    "ddp": None,
                })
        yield p


def fpdu_octets(length):
    """Wire octets of an FPDU of @length ULPDU octets, without Markers."""
    return 2 + length + (-(length + 2) % 4) + 4
