"""Responder: requests built with scapy go in, the frames that come out are dissected with
scapy and compared with scapy-built golden replies (checksums recomputed by scapy must
match), under random backpressure, checking that a started frame never has a bubble."""

import random
import socket

import pytest
from amaranth import Module
from amaranth.sim import Simulator
from bankbus import BankBus
from scapy.layers.inet6 import (
    ICMPv6ND_NA,
    ICMPv6ND_NS,
    ICMPv6NDOptDstLLAddr,
    ICMPv6NDOptSrcLLAddr,
    IPv6,
    in6_getnsma,
    in6_getnsmac,
)
from scapy.layers.l2 import ARP, Ether
from scapy.packet import Raw
from scapy.utils6 import inet_pton

from wirespeed.gateware.registers import RegisterBank
from wirespeed.gateware.responder import Responder

MAC = "02:00:00:00:00:01"
IP4 = "198.18.0.1"
IP6 = "2001:db8::1"
PEER_MAC = "02:aa:bb:cc:dd:ee"
PEER_IP4 = "198.18.0.99"
PEER_IP6 = "2001:db8::99"


def mac_int(mac):
    return int(mac.replace(":", ""), 16)


def ip6_int(ip):
    return int.from_bytes(inet_pton(socket.AF_INET6, ip), "big")


def ip4_int(ip):
    return int.from_bytes(socket.inet_aton(ip), "big")


def pad(frame: bytes) -> bytes:
    return frame.ljust(60, b"\0")


def arp_request(target=None, op=1, **kw):
    target = target or IP4
    return pad(bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC)
                     / ARP(op=op, hwsrc=PEER_MAC, psrc=PEER_IP4, pdst=target, **kw)))


def arp_reply_golden():
    return pad(bytes(Ether(dst=PEER_MAC, src=MAC) / ARP(op=2, hwsrc=MAC, psrc=IP4, hwdst=PEER_MAC, pdst=PEER_IP4)))


def ns(target=None, src=None, hlim=255, lladdr=True):
    target, src = target or IP6, src or PEER_IP6
    snm = socket.inet_ntop(socket.AF_INET6, in6_getnsma(inet_pton(socket.AF_INET6, target)))
    pkt = (Ether(dst=in6_getnsmac(inet_pton(socket.AF_INET6, snm)), src=PEER_MAC)
           / IPv6(src=src, dst=snm, hlim=hlim) / ICMPv6ND_NS(tgt=target))
    if lladdr:
        pkt = pkt / ICMPv6NDOptSrcLLAddr(lladdr=PEER_MAC)
    return pad(bytes(pkt))


def na_golden(dst_mac=None, dst_ip=None, S=1):
    dst_mac, dst_ip = dst_mac or PEER_MAC, dst_ip or PEER_IP6
    return bytes(Ether(dst=dst_mac, src=MAC) / IPv6(src=IP6, dst=dst_ip, hlim=255)
                 / ICMPv6ND_NA(R=0, S=S, O=1, tgt=IP6) / ICMPv6NDOptDstLLAddr(lladdr=MAC))


def garp_golden():
    return pad(bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=MAC)
                     / ARP(op=1, hwsrc=MAC, psrc=IP4, hwdst="00:00:00:00:00:00", pdst=IP4)))


def check_checksums(frame: bytes):
    """Scapy recomputes the ICMPv6 checksum of an emitted advertisement: it must match."""
    pkt = Ether(frame)
    got = pkt[ICMPv6ND_NA].cksum
    del pkt[ICMPv6ND_NA].cksum
    again = Ether(bytes(pkt))
    assert again[ICMPv6ND_NA].cksum == got
    assert bytes(again) == frame


class Harness:
    def __init__(self, ready_p):
        self.bank = RegisterBank(name="t", version="0", clk_hz=125_000_000, n_ports=1)
        self.dut = Responder(self.bank, "p0")
        self.rmap = self.bank.register_map()
        self.csr = BankBus(self.bank.bus, self.rmap)
        self.m = Module()
        self.m.submodules.bank = self.bank
        self.m.submodules.dut = self.dut
        self.ready_p = ready_p
        self.out = []          # frames emitted
        self.rng = random.Random(ready_p)

    async def counters(self, ctx):
        return tuple([await self.csr.read(ctx, f"p0.arp.{n}")
                      for n in ("arp_requests", "arp_replies", "ns_received", "na_sent")])

    async def setup(self, ctx, enable=3):
        await self.csr.write(ctx, "p0.arp.mac", mac_int(MAC))
        await self.csr.write(ctx, "p0.arp.ipv4", ip4_int(IP4))
        await self.csr.write(ctx, "p0.arp.ipv6", ip6_int(IP6))
        await self.csr.write(ctx, "p0.arp.enable", enable)

    async def send(self, ctx, data, error=False):
        sink = self.dut.sink
        for i, b in enumerate(data):
            ctx.set(sink.valid, 1)
            ctx.set(sink.p, {"data": b, "first": i == 0, "last": i == len(data) - 1,
                             "error": error and i == len(data) - 1})
            await ctx.tick()
        ctx.set(sink.valid, 0)
        await ctx.tick().repeat(12)

    async def settle(self, ctx, frames_before):
        """Wait for the responder to finish whatever it is doing."""
        for _ in range(2000):
            await ctx.tick()
            if not ctx.get(self.dut.pending) and len(self.out) >= frames_before:
                await ctx.tick().repeat(20)
                if not ctx.get(self.dut.pending):
                    return
        raise AssertionError("the responder never finished")

    async def collector(self, ctx):
        src = self.dut.source
        frame, prev = None, None
        while True:
            ready = self.rng.random() < self.ready_p
            ctx.set(src.ready, ready)
            valid = ctx.get(src.valid)
            beat = (ctx.get(src.p.data), ctx.get(src.p.first), ctx.get(src.p.last)) if valid else None
            assert valid == ctx.get(self.dut.pending)
            if frame is not None:
                assert valid, "bubble inside a frame"
            if prev is not None:
                assert beat == prev, "data changed while ready was low"
            prev = None
            if valid:
                if frame is None:
                    frame = bytearray()
                assert beat[1] == (not frame), "first flag wrong"
                if ready:
                    frame.append(beat[0])
                    if beat[2]:
                        self.out.append(bytes(frame))
                        frame = None
                else:
                    prev = beat
            await ctx.tick()


def run(h, bench):
    sim = Simulator(h.m)
    sim.add_clock(8e-9)
    sim.add_testbench(h.collector, background=True)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("ready_p", [1.0, 0.5, 0.15])
def test_answers_and_ignores(ready_p):
    h = Harness(ready_p)

    async def bench(ctx):
        await h.setup(ctx)
        expect = []

        async def case(frame, reply=None, error=False):
            await h.send(ctx, frame, error)
            if reply is not None:
                expect.append(reply)
            await h.settle(ctx, len(expect))
            assert h.out == expect

        await case(arp_request(), arp_reply_golden())
        assert await h.counters(ctx) == (1, 1, 0, 0)
        await case(arp_request(target="198.18.0.2"))                  # not ours
        await case(arp_request(), error=True)                         # bad FCS
        await case(arp_request(op=2))                                 # a reply, not a request
        await case(bytes(Ether(dst="ff:ff:ff:ff:ff:ff", src=PEER_MAC, type=0x0800) / Raw(bytes(46))))
        await case(arp_request(target="198.18.0.1")[:41])             # truncated
        assert await h.counters(ctx) == (1, 1, 0, 0)

        await case(ns(), na_golden())
        check_checksums(h.out[-1])
        assert Ether(h.out[-1])[ICMPv6ND_NA].S == 1
        await case(ns(lladdr=False), na_golden())
        assert await h.counters(ctx) == (1, 1, 2, 2)
        await case(ns(src="::", lladdr=False), na_golden("33:33:00:00:00:01", "ff02::1", S=0))   # DAD
        check_checksums(h.out[-1])
        await case(ns(target="2001:db8::2"))                          # not ours
        await case(ns(hlim=64))                                       # not from the link
        await case(ns(), error=True)                                  # bad FCS
        bad = bytearray(ns())
        bad[56] ^= 0x01                                               # ICMPv6 checksum
        await case(bytes(bad))
        await case(ns() + bytes([0x5A] * 6), na_golden())             # a trailer after the payload: not summed
        assert await h.counters(ctx) == (1, 1, 4, 4)

        # enable bits: counted, not answered
        await h.csr.write(ctx, "p0.arp.enable", 2)
        await case(arp_request())
        await case(ns(), na_golden())
        await h.csr.write(ctx, "p0.arp.enable", 1)
        await case(ns())
        await case(arp_request(), arp_reply_golden())
        assert await h.counters(ctx) == (3, 2, 6, 5)

        # commands: announcement and unsolicited advertisement (always sent)
        await h.csr.write(ctx, "p0.arp.enable", 0)
        await h.csr.write(ctx, "p0.arp.cmd", 1)
        expect.append(garp_golden())
        await h.settle(ctx, len(expect))
        await h.csr.write(ctx, "p0.arp.cmd", 2)
        expect.append(na_golden("33:33:00:00:00:01", "ff02::1", S=0))
        await h.settle(ctx, len(expect))
        assert h.out == expect
        check_checksums(h.out[-1])
        pkt = Ether(h.out[-1])
        assert (pkt[ICMPv6ND_NA].R, pkt[ICMPv6ND_NA].S, pkt[ICMPv6ND_NA].O) == (0, 0, 1)
        await h.csr.write(ctx, "p0.arp.cmd", 3)                           # both: one after the other
        expect += [garp_golden(), na_golden("33:33:00:00:00:01", "ff02::1", S=0)]
        await h.settle(ctx, len(expect))
        assert h.out == expect
        assert await h.counters(ctx) == (3, 4, 6, 7)

    run(h, bench)


def test_request_while_busy_is_counted_not_answered():
    h = Harness(0.0)       # the port never lets the reply out

    async def bench(ctx):
        await h.setup(ctx)
        await h.send(ctx, arp_request())
        assert ctx.get(h.dut.pending)
        await h.send(ctx, arp_request())
        await h.send(ctx, ns())
        assert await h.counters(ctx) == (2, 0, 1, 0)
        h.ready_p = 1.0
        await h.settle(ctx, 1)
        assert h.out == [arp_reply_golden()]
        assert await h.counters(ctx) == (2, 1, 1, 0)
        await h.csr.write(ctx, "p0.arp.mac", mac_int("02:00:00:00:00:07"))   # addresses are live
        await h.send(ctx, ns())
        await h.settle(ctx, 2)
        frame = h.out[-1]
        check_checksums(frame)
        assert Ether(frame).src == "02:00:00:00:00:07"
        assert Ether(frame)[ICMPv6NDOptDstLLAddr].lladdr == "02:00:00:00:00:07"

    run(h, bench)


def test_random_addresses_against_scapy():
    """Random IPv6 addresses (checksum corner cases) and requesters."""
    rng = random.Random(5)
    h = Harness(0.7)

    async def bench(ctx):
        global MAC, IP6, PEER_MAC, PEER_IP6
        saved = MAC, IP6, PEER_MAC, PEER_IP6
        try:
            for _ in range(12):
                MAC = ":".join(f"{rng.randrange(256) & 0xFE:02x}" for _ in range(6))
                PEER_MAC = ":".join(f"{rng.randrange(256) & 0xFE:02x}" for _ in range(6))
                IP6 = socket.inet_ntop(socket.AF_INET6, bytes(rng.choice([0, 0xFF, rng.randrange(256)])
                                                              for _ in range(16)))
                PEER_IP6 = socket.inet_ntop(socket.AF_INET6, rng.randbytes(16))
                await h.setup(ctx)
                before = len(h.out)
                await h.send(ctx, ns())
                await h.settle(ctx, before + 1)
                assert h.out[-1] == na_golden()
                check_checksums(h.out[-1])
        finally:
            MAC, IP6, PEER_MAC, PEER_IP6 = saved

    run(h, bench)


def test_reply_is_ready_as_documented():
    """docs/capture.md: a reply is ready 6 cycles after the request's last byte, an
    advertisement 75 (its checksum is summed a byte at a time)."""
    h = Harness(1.0)
    waited = {}

    async def bench(ctx):
        await h.setup(ctx)
        for name, frame in (("arp", arp_request()), ("ns", ns())):
            sink = h.dut.sink
            for i, b in enumerate(frame):
                ctx.set(sink.valid, 1)
                ctx.set(sink.p, {"data": b, "first": i == 0, "last": i == len(frame) - 1, "error": 0})
                await ctx.tick()
            ctx.set(sink.valid, 0)
            waited[name] = 0
            while not ctx.get(h.dut.pending):
                await ctx.tick()
                waited[name] += 1
            await h.settle(ctx, len(h.out) + 1)

    run(h, bench)
    assert waited == {"arp": 6, "ns": 75}
    assert h.out == [arp_reply_golden(), na_golden()]
