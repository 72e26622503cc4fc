"""Host side of the capture: arming, decoding the index and data windows (on a fake
register file, and on the words the gateware simulation really holds), pcap output."""

import random
import struct

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator
from scapy.layers.l2 import Ether
from scapy.utils import RawPcapReader

from wirespeed.capture import CapturedFrame, arm_capture, capture_status, read_capture, write_pcap
from wirespeed.errors import DeviceError
from wirespeed.gateware import frame as F
from wirespeed.gateware.capture import Capture
from wirespeed.gateware.registers import READ_LATENCY, WRITE_LATENCY, RegisterBank
from wirespeed.host.device import Device
from wirespeed.transport import FakeTransport


def make_bank():
    bank = RegisterBank(name="t", version="0", clk_hz=125_000_000, n_ports=2)
    caps = [Capture(bank, "p0"), Capture(bank.block(0x2000), "p1", data_words=256, max_frames=4)]
    return bank, caps


@pytest.fixture
def cap_map():
    bank, caps = make_bank()
    for c in (bank, *caps):
        c._MustUse__silence = True
    return bank.register_map()


@pytest.fixture
def fake(cap_map):
    return FakeTransport(cap_map)


@pytest.fixture
def device(fake, cap_map):
    return Device(fake, cap_map)


def entry(ts, wire_len, stored, flags, offset):
    return ts | wire_len << 64 | stored << 80 | flags << 96 | offset << 112


def test_arm_writes_config_then_arm(device, fake):
    arm_capture(device, 1, trigger="fcs", count=3, snaplen=64)
    assert fake.get("p1.cap.trigger") == 1 and fake.get("p1.cap.count") == 3
    assert fake.get("p1.cap.snaplen") == 64 and fake.strobes == [("p1.cap.arm", 1)]
    arm_capture(device, 0, trigger=2)
    assert fake.get("p0.cap.count") == 32 and fake.get("p0.cap.trigger") == 2
    assert fake.get("p0.cap.snaplen") == 128


@pytest.mark.parametrize("kwargs, message", [
    (dict(port=2), "port must be 0..1"),
    (dict(trigger="bad"), "trigger must be one of first, fcs, not_test"),
    (dict(trigger=3), "trigger must be one of"),
    (dict(count=0), "count must be 1..4 frames"),
    (dict(count=5), "count must be 1..4 frames"),
    (dict(snaplen=15), "snaplen must be 16..1024 bytes"),
    (dict(snaplen=1025), "snaplen must be 16..1024 bytes"),
])
def test_arm_rejects(device, kwargs, message):
    kwargs = {"port": 1, **kwargs}
    with pytest.raises(ValueError, match=message) as info:
        arm_capture(device, kwargs.pop("port"), **kwargs)
    assert "\n" not in str(info.value)


def test_read_capture_decodes_entries(device, fake):
    a, b = bytes(range(1, 62)), bytes(range(200, 216))
    words = [int.from_bytes((a + bytes(3))[i:i + 4], "big") for i in range(0, 64, 4)]
    words += [int.from_bytes(b[i:i + 4], "big") for i in range(0, 16, 4)]
    for i, w in enumerate(words):
        fake.set_entry("p1.cap.data", i, w)
    fake.set_entry("p1.cap.index", 0, entry(123_456_789_012, 65, 61, 0, 0))
    fake.set_entry("p1.cap.index", 1, entry(123_456_790_000, 1518, 16, 1, 16))
    fake.set_entry("p1.cap.index", 2, entry(1, 64, 60, 0, 20))   # not yet counted
    fake.set("p1.cap.frames", 2)
    fake.set("p1.cap.state", 3)
    assert capture_status(device, 1).model_dump() == {"state": "done", "frames": 2}
    got = read_capture(device, 1)
    assert got == [CapturedFrame(ts_ns=123_456_789_012, wire_len=65, data=a),
                   CapturedFrame(ts_ns=123_456_790_000, wire_len=1518, data=b, fcs_error=True)]
    assert not got[0].truncated and got[1].truncated
    fake.set_entry("p1.cap.index", 1, entry(0, 1518, 16, 0, 255))  # runs off the memory
    with pytest.raises(DeviceError, match="index entry 1 is inconsistent"):
        read_capture(device, 1)
    fake.set("p1.cap.frames", 0)
    assert read_capture(device, 1) == []


def test_write_pcap_nanosecond_records(tmp_path):
    frames = [CapturedFrame(ts_ns=3_000_000_123, wire_len=68, data=bytes(range(64))),
              CapturedFrame(ts_ns=3_999_999_999, wire_len=1518, data=b"\xaa" * 128, fcs_error=True)]
    path = write_pcap(tmp_path / "cap.pcap", frames, epoch_ns=1_700_000_000 * 10**9)
    raw = path.read_bytes()
    magic, _, _, _, _, snaplen, linktype = struct.unpack("<IHHIIII", raw[:24])
    assert (magic, linktype) == (0xA1B23C4D, 1)
    records = list(RawPcapReader(str(path)))
    assert [r[0] for r in records] == [f.data for f in frames]
    meta = [(m.sec, m.usec, m.caplen, m.wirelen) for _, m in records]
    assert meta == [(1_700_000_003, 123, 64, 64), (1_700_000_003, 999_999_999, 128, 1514)]
    assert [p.name for p in tmp_path.iterdir()] == ["cap.pcap"]      # no temporary left
    write_pcap(tmp_path / "cap.pcap", [])                              # replaced atomically
    assert len((tmp_path / "cap.pcap").read_bytes()) == 24
    with pytest.raises(ValueError, match="epoch_ns must be"):
        write_pcap(tmp_path / "x.pcap", frames, epoch_ns=-1)
    assert [p.name for p in tmp_path.iterdir()] == ["cap.pcap"]


def test_gateware_words_decode_to_the_frames_sent(tmp_path):
    """Run the capture gateware, copy every word of its registers into a fake register file,
    and read it back with read_capture: the host's decoding matches the gateware layout."""
    rng = random.Random(3)
    bank, caps = make_bank()
    rmap = bank.register_map()
    cap = caps[0]
    caps[1]._MustUse__silence = True
    m = Module()
    m.submodules.bank, m.submodules.cap = bank, cap
    now = Signal(64, init=5_000)
    m.d.sync += now.eq(now + 8)
    m.d.comb += cap.now.eq(now)
    frames = [F.build_frame(frame_len=64, dst_mac=2, src_mac=1, src_ip=3, dst_ip=4, seq=i, ts=i)
              for i in range(3)]
    frames.insert(1, bytes(rng.randrange(256) for _ in range(77)))
    errors = [False, True, False, False]
    sent, words = [], {}

    async def bench(ctx):
        async def bus_write(name, value):
            ctx.set(bank.bus.addr, rmap[name].offset >> 2)
            ctx.set(bank.bus.w_data, value)
            ctx.set(bank.bus.w_stb, 1)
            await ctx.tick()
            ctx.set(bank.bus.w_stb, 0)
            await ctx.tick().repeat(WRITE_LATENCY)
        await bus_write("p0.cap.trigger", 1)       # from the first bad FCS on
        await bus_write("p0.cap.snaplen", 40)
        await bus_write("p0.cap.arm", 1)
        for data, err in zip(frames, errors):
            for i, b in enumerate(data):
                ctx.set(cap.sink.valid, 1)
                ctx.set(cap.sink.p, {"data": b, "first": i == 0, "last": i == len(data) - 1,
                                     "error": err and i == len(data) - 1})
                if i == 0:
                    sent.append((data, err, ctx.get(now)))
                await ctx.tick()
            ctx.set(cap.sink.valid, 0)
            await ctx.tick().repeat(5)
        for reg in rmap:
            if reg.name.startswith("p0.cap.") and reg.access != "w":
                for off in reg.word_offsets[:4 * 8] if reg.name.endswith("index") else (
                        reg.word_offsets[:64] if reg.name.endswith("data") else reg.word_offsets):
                    ctx.set(bank.bus.addr, off >> 2)
                    ctx.set(bank.bus.r_stb, 1)
                    await ctx.tick()
                    ctx.set(bank.bus.r_stb, 0)
                    await ctx.tick().repeat(READ_LATENCY)
                    words[off] = ctx.get(bank.bus.r_data)

    sim = Simulator(m)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    fake = FakeTransport(rmap)
    fake._words.update(words)
    device = Device(fake, rmap)
    assert capture_status(device, 0).state == "capturing"
    got = read_capture(device, 0)
    want = [CapturedFrame(ts_ns=ts, wire_len=len(d) + 4, data=d[:40], fcs_error=e) for d, e, ts in sent[1:]]
    assert got == want
    path = write_pcap(tmp_path / "c.pcap", got)
    records = list(RawPcapReader(str(path)))
    assert Ether(records[1][0]).dst == "00:00:00:00:00:02"
    assert [(m.caplen, m.wirelen) for _, m in records] == [(40, 77), (40, 60), (40, 60)]
