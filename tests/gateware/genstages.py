"""Golden models of the traffic generator's stage interfaces (wirespeed.gateware.gen_layouts),
written from their documentation and streamdesc's rules: what a prepared frame's launch flags
say about its first bytes, and the bytes the emitter sends for a prepared frame. A prepared
frame is a dict of PreparedFrame's fields (``mod``: a list of dicts of each unit's ``apply``,
``off``, ``mask`` and ``value``; ``launch``: a dict);
:func:`get_frame` and :func:`set_frame` move one between a simulation and a dict."""

from wirespeed.gateware import frame as F
from wirespeed.gateware.gen_layouts import FIELDS

#: the frame layout's member holding each patch field's value
VALUE = {"len1": "len1", "len2": "len2", "ip": "ip_csum"}


def covering_field(fr, i):
    """(name, is_hi) of the patch field whose bytes cover byte ``i`` (the last one listed
    wins), or None."""
    found = None
    for name in FIELDS:
        if fr[f"{name}_en"] and fr[f"{name}_off"] <= i < fr[f"{name}_off"] + 2:
            found = (name, i == fr[f"{name}_off"])
    return found


def launch_flags(fr):
    """The launch flags prepare must give frame ``fr`` (gen_layouts.launch_flag_names)."""
    length, hdr = fr["frame_len"], fr["hdr_len"]
    sig_at = length - F.SIG_FROM_END
    flags = {"sig0": sig_at == 0, "sig01": sig_at in (0, 1), "hdr0": hdr > 0, "hdr1": hdr > 1}
    for name in FIELDS:
        for k in (1, 2):
            flags[f"{name}_at{k}"] = bool(fr[f"{name}_en"]) and fr[f"{name}_off"] == k
    cover0, cover1 = covering_field(fr, 0), covering_field(fr, 1)
    for name in FIELDS:
        flags[f"{name}_sel0"] = cover0 == (name, True)
        flags[f"{name}_sel1hi"] = cover1 == (name, True)
        flags[f"{name}_sel1lo"] = cover1 == (name, False)
    flags["f0_any"], flags["f1_any"] = cover0 is not None, cover1 is not None
    for k, sig, in_hdr, cover in ((0, flags["sig0"], flags["hdr0"], cover0),
                                  (1, flags["sig01"], flags["hdr1"], cover1)):
        flags[f"use{k}_f"] = not sig and in_hdr and cover is not None
        flags[f"use{k}_t"] = not sig and in_hdr and cover is None
    for k in range(3):
        flags[f"udp_at{k}"] = bool(fr["udp_en"]) and fr["udp_off"] == k
    flags["udp_out0"] = flags["udp_at0"] and flags["hdr0"] and not flags["sig0"]
    for j, mod in enumerate(fr["mod"]):
        for k in range(3):
            flags[f"mod{j}_at{k}"] = bool(mod["apply"]) and mod["off"] == k
    return {name: int(value) for name, value in flags.items()}


def patch_byte(fr, i, byte):
    """Template byte ``i`` under the modifiers that apply (a later one wins)."""
    for mod in fr["mod"]:
        if mod["apply"] and mod["off"] <= i < mod["off"] + 4:
            shift = 8 * (3 - (i - mod["off"]))
            mask, value = (mod["mask"] >> shift) & 0xFF, (mod["value"] >> shift) & 0xFF
            byte = (byte & ~mask) | (value & mask)
    return byte


def byte0_mods(fr):
    """(pm0, pv0): the modifiers' mask and value on byte 0, merged (a later one wins)."""
    mask = value = 0
    for mod in fr["mod"]:
        if mod["apply"] and mod["off"] == 0:
            mk, vl = mod["mask"] >> 24, mod["value"] >> 24
            mask, value = mask | mk, (value & ~mk) | (vl & mk)
    return mask, value


def udp_checksum(fr, ts):
    """The UDP checksum field: the prepared part plus the signature's words (timestamp and
    check from ``ts``), its residue modulo 0xFFFF inverted (never 0), byte-swapped back when
    the signature starts an odd number of bytes after the field."""
    ts &= (1 << 48) - 1
    words = [ts >> 32, (ts >> 16) & 0xFFFF, ts & 0xFFFF]
    check = fr["sig_x"] ^ words[0] ^ words[1] ^ words[2]
    total = sum(words) + fr["sig_sum"] + check + fr["udp_part"]
    csum = ~(total % 0xFFFF) & 0xFFFF
    if (fr["frame_len"] ^ fr["udp_off"]) & 1:
        csum = ((csum & 0xFF) << 8) | (csum >> 8)
    return csum


def emitted(fr, template, ts):
    """The ``frame_len - 4`` bytes the emitter sends for prepared frame ``fr`` (``template``:
    its stream's 128 template bytes) launched with ``now`` = ``ts``."""
    length, hdr = fr["frame_len"], fr["hdr_len"]
    sig_at = length - F.SIG_FROM_END
    ts &= (1 << 48) - 1
    check = fr["sig_x"] ^ (ts >> 32) ^ ((ts >> 16) & 0xFFFF) ^ (ts & 0xFFFF)
    sig = (F.SIG_MAGIC.to_bytes(2, "big") + fr["stream_id"].to_bytes(2, "big") + fr["seq"].to_bytes(4, "big")
           + ts.to_bytes(6, "big") + check.to_bytes(2, "big"))
    udp = udp_checksum(fr, ts)
    out = bytearray()
    for i in range(length - F.FCS):
        if i >= sig_at:
            out.append(sig[i - sig_at])
        elif i < hdr:
            if fr["udp_en"] and fr["udp_off"] <= i < fr["udp_off"] + 2:
                out.append(udp >> 8 if i == fr["udp_off"] else udp & 0xFF)
                continue
            cover = covering_field(fr, i)
            if cover is not None:
                value = fr[VALUE[cover[0]]]
                out.append(value >> 8 if cover[1] else value & 0xFF)
            else:
                out.append(patch_byte(fr, i, template[i]))
        else:
            out.append(0)
    return bytes(out)


def _fields(frame):
    """(signal, path) of every field of a PreparedFrame interface."""
    return [(value, path) for path, _, value in frame.signature.flatten(frame)]


def get_frame(ctx, frame):
    """The prepared frame on interface ``frame``, as a dict."""
    out = {"mod": [], "launch": {}}
    for sig, path in _fields(frame):
        if path[0].startswith("mod_"):
            while len(out["mod"]) <= path[1]:
                out["mod"].append({})
            out["mod"][path[1]][path[0][4:]] = ctx.get(sig)
        elif path[0] == "launch":
            out["launch"][path[1]] = ctx.get(sig)
        else:
            out[path[0]] = ctx.get(sig)
    return out


def set_frame(ctx, frame, fr):
    """Drive interface ``frame`` with the prepared frame ``fr`` (a dict)."""
    for sig, path in _fields(frame):
        if path[0].startswith("mod_"):
            ctx.set(sig, fr["mod"][path[1]][path[0][4:]])
        elif path[0] == "launch":
            ctx.set(sig, fr["launch"][path[1]])
        else:
            ctx.set(sig, fr[path[0]])
