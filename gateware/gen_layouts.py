"""What passes between the traffic generator's stages (:mod:`.generator`): the descriptor as
the tables hold it, the prepared frame that *prepare* hands to the *emitter*
(:class:`PreparedFrame` in a :class:`FrameHandoff`), and the patch rules both stages apply to a
frame's bytes (a later modifier wins, the last field wins).

The stream format itself (fields, their order, every rule) is :mod:`.streamdesc`; the
layouts here are derived from it.
"""

from amaranth import Const, Mux
from amaranth.lib import data, wiring
from amaranth.lib.wiring import Out

from . import streamdesc as SD

__all__ = ["DESC_LAYOUT", "FIELDS", "launch_flag_names", "PreparedFrame", "FrameHandoff",
           "priority", "merge_mods", "select"]


def _desc_layout():
    fields, at = {}, 0
    for name, bits in SD.DESC_FIELDS:
        fields[name] = data.Field(bits, at)
        at += bits
    return data.FlexibleLayout(SD.DESC_BITS, fields)


#: a descriptor entry (``pN.gen.desc``), fields at their bits of streamdesc.DESC_FIELDS
DESC_LAYOUT = _desc_layout()

#: the 16-bit fields the emitter writes over the template (lengths, IPv4 checksum), in the
#: order of priority: a later one wins where two overlap
FIELDS = ("len1", "len2", "ip")


def launch_flag_names(n_modifiers):
    """The launch flags of a prepared frame: what its bytes 0, 1 and 2 are (worked out by
    prepare, so that the emitter's launch needs no compare)."""
    names = ["sig0", "sig01", "hdr0", "hdr1", "f0_any", "f1_any", "udp_at0", "udp_at1", "udp_at2", "udp_out0",
             "use0_f", "use0_t", "use1_f", "use1_t"]
    for name in FIELDS:
        names += [f"{name}_at1", f"{name}_at2", f"{name}_sel0", f"{name}_sel1hi", f"{name}_sel1lo"]
    for j in range(n_modifiers):
        names += [f"mod{j}_at0", f"mod{j}_at1", f"mod{j}_at2"]
    return names


#: the members of :class:`PreparedFrame` that hold a modifier unit's patch (one per unit)
MOD_MEMBERS = ("mod_apply", "mod_off", "mod_mask", "mod_value")


class PreparedFrame(wiring.Signature):
    """One prepared frame: everything the emitter needs to send it without looking at a
    descriptor, template aside. Each field is a signal of its own: a register in prepare, and
    one in the emitter that follows it while the line is idle."""

    def __init__(self, n_modifiers):
        super().__init__({
            "stream": Out(4), "stream_id": Out(16), "seq": Out(32),
            "frame_len": Out(14), "hdr_len": Out(7),
            "len1_en": Out(1), "len1_off": Out(7), "len1": Out(16),
            "len2_en": Out(1), "len2_off": Out(7), "len2": Out(16),
            "ip_en": Out(1), "ip_off": Out(7), "ip_csum": Out(16),
            # the UDP checksum's sum but the signature's (byte-swapped when the signature starts
            # an odd number of bytes after the checksum field: the emitter swaps the result back)
            "udp_en": Out(1), "udp_off": Out(7), "udp_part": Out(16),
            # the signature's static words: magic + stream id + sequence halves; the check's
            # stream id ^ sequence halves ^ seed
            "sig_sum": Out(18), "sig_x": Out(16),
            # each modifier unit j: whether it patches this frame, where, and with what
            "mod_apply": Out(1).array(n_modifiers), "mod_off": Out(7).array(n_modifiers),
            "mod_mask": Out(32).array(n_modifiers), "mod_value": Out(32).array(n_modifiers),
            # the modifiers' mask and value on byte 0, merged (a later modifier wins)
            "pm0": Out(8), "pv0": Out(8),
            "launch": Out(wiring.Signature({name: Out(1) for name in launch_flag_names(n_modifiers)})),
        })

    @staticmethod
    def copy(dst, src, *, mods=None):
        """``dst.eq(src)`` for every field of two prepared frames; ``mods`` True or False: only
        the modifier units' fields, or all but them."""
        sig = src.signature
        return [d.eq(s) for (path, _, d), (_, _, s) in zip(sig.flatten(dst), sig.flatten(src))
                if mods is None or (path[0] in MOD_MEMBERS) == mods]


class FrameHandoff(wiring.Signature):
    """Prepare to emitter. ``frame`` holds the prepared frame from its commit until the
    scheduler launches it (``go``); the emitter follows it while the line is idle and holds it
    from the launch on. ``stream`` is the stream being prepared (the next frame's), whose
    template bytes 0 to 2 the emitter fetches ahead; ``picked``: it changes at this edge
    (fetch again). ``committed`` (with modifiers): ``frame`` changes at this edge."""

    def __init__(self, n_streams, n_modifiers):
        super().__init__({
            "frame": Out(PreparedFrame(n_modifiers)),
            "stream": Out(range(n_streams)),
            "picked": Out(1),
        } | ({"committed": Out(1)} if n_modifiers else {}))


def priority(flags):
    """``flags`` (first wins) made one-hot: each and none before it."""
    out, before = [], Const(0, 1)
    for flag in flags:
        out.append(flag & ~before)
        before = before | flag
    return out


def merge_mods(pairs):
    """(mask, value) bytes of modifiers, later ones first where they overlap, merged into one."""
    mask, value = Const(0, 8), Const(0, 8)
    for mk, vl in pairs:
        mask, value = mask | mk, (value & ~mk) | (vl & mk)
    return mask, value


def select(pairs):
    """OR of the values whose (one-hot) select is set."""
    acc = Const(0, 8)
    for sel, value in pairs:
        acc = acc | Mux(sel, value, 0)
    return acc
