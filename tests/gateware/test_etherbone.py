"""The Etherbone engine (gateware/etherbone.py) and the UART bridge (gateware/mgmt.py),
with the host's own encoder/decoder (wirespeed.transport, serial_transport) as the
golden host side and a bus model that keeps to the CSR bus timing (read data valid two
cycles after the strobe, garbage before)."""

import random
import struct
import zlib

import pytest
from amaranth import Shape
from amaranth.sim import Simulator

from wirespeed.gateware.etherbone import EtherboneEngine
from wirespeed.gateware.mgmt import SlipCrcRx, SlipCrcTx, UartBridge
from wirespeed.gateware.registers import READ_LATENCY
from wirespeed.transport.base import Record, decode_answer, encode_request, plan_records
from wirespeed.transport.uart import SlipDecoder, decode_stale, slip_frame

GARBAGE = 0xBAD0BAD0
WINDOW = 1 << 18  # bytes reachable with a 16-bit word address


def initial(word):
    return ((word * 2654435761) ^ 0x5A5A5A5A) & 0xFFFFFFFF


class BusModel:
    """Words at word addresses, an access log, and the two-cycle read timing."""

    def __init__(self):
        self.words = {}
        self.log = []
        self._pending = []   # [cycles left, value]
        self.value = 0

    def read_word(self, addr):
        return self.words.get(addr, initial(addr))

    def step(self, ctx, dut):
        """Call once per cycle, before the tick."""
        for p in self._pending:
            p[0] -= 1
        if self._pending and self._pending[0][0] == 0:
            self.value = self._pending.pop(0)[1]
            ctx.set(dut.csr_r_data, self.value)
        elif self._pending:
            ctx.set(dut.csr_r_data, GARBAGE)
        addr = ctx.get(dut.csr_addr)
        if ctx.get(dut.csr_w_stb):
            data = ctx.get(dut.csr_w_data)
            self.words[addr] = data
            self.log.append(("W", addr, data))
        if ctx.get(dut.csr_r_stb):
            assert not self._pending, "read strobes closer than the bus allows"
            value = self.read_word(addr)
            self.log.append(("R", addr, value))
            self._pending.append([READ_LATENCY + 1, value])   # valid READ_LATENCY edges after the strobe's


def run_engine(frames, *, seed=0, o_ready=1.0, i_gaps=0.0, max_cycles=400_000):
    """Feed ``frames`` ((bytes, drop) pairs) to an engine; returns (bus, answers, counters)."""
    rng = random.Random(seed)
    dut = EtherboneEngine()
    bus = BusModel()
    answers, current = [], bytearray()
    items = []
    for data, drop in frames:
        items += [(b, i == len(data) - 1, drop) for i, b in enumerate(data)]
    result = {}

    async def bench(ctx):
        queue = list(items)
        idle = 0
        for _ in range(max_cycles):
            bus.step(ctx, dut)
            feed = bool(queue) and rng.random() >= i_gaps
            ctx.set(dut.i.valid, feed)
            if queue:
                b, last, drop = queue[0]
                ctx.set(dut.i.payload, {"data": b, "last": last, "drop": drop})
            ready = rng.random() < o_ready
            ctx.set(dut.o.ready, ready)
            if ready and ctx.get(dut.o.valid):
                current.append(ctx.get(dut.o.payload.data))
                if ctx.get(dut.o.payload.last):
                    answers.append(bytes(current))
                    current.clear()
            if feed and ctx.get(dut.i.ready):
                queue.pop(0)
            idle = idle + 1 if not queue and not ctx.get(dut.o.valid) else 0
            await ctx.tick()
            if idle > 3000:   # longer than any execution (255 writes, 255 reads)
                break
        assert not queue and not current, "engine stalled"
        for name in ("requests", "replays", "stale", "malformed"):
            result[name] = ctx.get(getattr(dut, name))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return bus, answers, result


def expected_accesses(record, mem):
    """What the bus must see for ``record`` (writes, then reads), updating ``mem``."""
    acc = []
    for i, word in enumerate(record.data):
        addr = record.base + 4 * i
        if addr < WINDOW:
            mem[addr >> 2] = word
            acc.append(("W", addr >> 2, word))
    values = []
    for addr in record.reads:
        value = 0
        if addr < WINDOW:
            value = mem.get(addr >> 2, initial(addr >> 2))
            acc.append(("R", addr >> 2, value))
        values.append(value)
    return acc, values


def random_record(rng):
    nw = rng.choice([0, 1, 2, 7, 255])
    nr = rng.choice([1, 3, 64, 255])
    base = rng.choice([rng.randrange(0, WINDOW, 4), WINDOW - 8, rng.getrandbits(30) << 2])
    reads = [rng.choice([rng.randrange(0, 4096, 4), rng.randrange(0, 1 << 32, 4)]) for _ in range(nr)]
    return Record(base=base, data=[rng.getrandbits(32) for _ in range(nw)], reads=reads)


def test_random_records_execute_in_order_and_answer():
    rng = random.Random(5)
    records = [random_record(rng) for _ in range(12)]
    tags = [0x1000 + 4 * i for i in range(len(records))]
    bus, answers, counters = run_engine([(encode_request(r, t), False) for r, t in zip(records, tags)],
                                        seed=1, o_ready=0.7, i_gaps=0.3)
    mem, acc = {}, []
    for record, tag, answer in zip(records, tags, answers, strict=True):
        a, values = expected_accesses(record, mem)
        acc += a
        assert decode_answer(answer) == (tag, values)
    assert bus.log == acc
    assert counters == {"requests": len(records), "replays": 0, "stale": 0, "malformed": 0}


def test_plan_records_of_a_transaction():
    """The transport's own split of a big transaction (several records) runs as planned."""
    writes = [(0x100 + 4 * i, i) for i in range(300)]
    reads = [0x100 + 4 * i for i in range(0, 300, 2)]
    records = plan_records(writes, reads)
    frames = [(encode_request(r, 40 + 4 * i), False) for i, r in enumerate(records)]
    bus, answers, _ = run_engine(frames)
    words = [w for r, a in zip(records, answers) if not r.ack for w in decode_answer(a)[1]]
    assert words == list(range(0, 300, 2))


def test_retry_is_answered_from_the_cache_without_executing():
    rec = Record(base=0x40, data=[0xDEADBEEF, 7], reads=[0x40, 0x44, 0x1000])
    req = encode_request(rec, 0x500)
    bus, answers, counters = run_engine([(req, False), (req, False), (req, False)])
    assert [a[0] for a in bus.log].count("W") == 2 and len(bus.log) == 5   # executed once
    assert answers[0] == answers[1] == answers[2]
    assert decode_answer(answers[0]) == (0x500, [0xDEADBEEF, 7, initial(0x400)])
    assert counters["requests"] == 1 and counters["replays"] == 2


def test_older_tag_is_stale_and_not_executed():
    new = encode_request(Record(base=0x10, data=[1], reads=[0x10]), 0x8000_0100)
    old = encode_request(Record(base=0x10, data=[2], reads=[0x10]), 0x8000_00FC)
    wrapped = encode_request(Record(base=0x10, data=[3], reads=[0x10]), 0x0000_0100)  # 2^31 away
    newer = encode_request(Record(base=0x10, data=[4], reads=[0x10]), 0x8000_0104)
    bus, answers, counters = run_engine([(new, False), (old, False), (wrapped, False), (newer, False)])
    assert [a for a in bus.log if a[0] == "W"] == [("W", 4, 1), ("W", 4, 4)]
    assert decode_answer(answers[0]) == (0x8000_0100, [1])
    assert decode_answer(answers[1]) is None
    assert decode_stale(answers[1]) == (0x8000_00FC, 0x8000_0100)
    assert decode_stale(answers[2]) == (0x0000_0100, 0x8000_0100)
    assert decode_answer(answers[3]) == (0x8000_0104, [4])
    assert counters == {"requests": 2, "replays": 0, "stale": 2, "malformed": 0}


def test_first_request_after_reset_runs_whatever_its_tag():
    req = encode_request(Record(reads=[0x0]), 0xFFFF_FFFC)
    bus, answers, counters = run_engine([(req, False)])
    assert decode_answer(answers[0]) == (0xFFFF_FFFC, [initial(0)]) and counters["requests"] == 1


def test_write_fifo_flag_and_out_of_range():
    from litex.tools.remote.etherbone import EtherbonePacket, EtherboneReads, EtherboneRecord, EtherboneWrites

    rec = EtherboneRecord()
    rec.wff = 1
    rec.writes = EtherboneWrites(base_addr=0x30, datas=[5, 6, 7])
    rec.reads = EtherboneReads(base_ret_addr=9, addrs=[0x30, WINDOW, 0xFFFFFFFC, WINDOW - 4])
    p = EtherbonePacket()
    p.records = [rec]
    p.encode()
    oor = encode_request(Record(base=WINDOW - 4, data=[1, 2], reads=[WINDOW - 4]), 13)
    bus, answers, _ = run_engine([(bytes(p.bytes), False), (oor, False)])
    assert bus.log[:3] == [("W", 12, 5), ("W", 12, 6), ("W", 12, 7)]
    assert decode_answer(answers[0]) == (9, [7, 0, 0, initial(0xFFFF)])
    assert decode_answer(answers[1]) == (13, [1])
    assert ("W", 0xFFFF, 1) in bus.log and len([a for a in bus.log if a[0] == "W"]) == 4


def good_packets():
    return [encode_request(Record(reads=[0, 4]), 0x100),
            encode_request(Record(base=0x40, data=[1, 2, 3], reads=[0x40]), 0x104)]


def test_malformed_and_dropped_frames_touch_nothing():
    good = good_packets()
    bad = [
        b"\x4e",
        b"\x4e\x6f\x10\x44\x00\x00\x00\x00",                      # no record
        b"\x6f\x4e" + good[0][2:],                               # magic
        good[0][:2] + b"\x20" + good[0][3:],                     # version 2
        good[0][:2] + b"\x11" + good[0][3:],                     # probe
        good[0][:3] + b"\x88" + good[0][4:],                     # 64-bit addresses
        good[0] + b"\x00",                                       # trailing byte
        good[0] + good[1][8:],                                   # two records
        encode_request(Record(base=0x40, data=[1]), 0)[:-8][:16] + good[0][12:16],  # cut
        good[1][:8] + bytes([0, 0xF, 1, 0]) + good[1][12:20],    # no reads: no tag
    ]
    bad += [g[:n] for g in good for n in range(9, len(g))]       # every truncation
    frames = [(b, False) for b in bad] + [(g, True) for g in good] + [(good[0], False)]
    bus, answers, counters = run_engine(frames)
    assert bus.log == [("R", 0, initial(0)), ("R", 1, initial(1))]   # only the last frame ran
    assert len(answers) == 1 and decode_answer(answers[0])[0] == 0x100
    assert counters["malformed"] == len(bad) and counters["requests"] == 1


def test_fuzzed_frames_never_execute_unless_valid():
    """Random mutations of valid requests: a frame either parses exactly as some valid
    request (then it runs once) or touches nothing."""
    rng = random.Random(77)
    frames = []
    for i in range(200):
        nw, nr = rng.choice([0, 1, 3]), rng.choice([1, 2, 5])
        record = Record(base=rng.randrange(0, 4096, 4), data=[rng.getrandbits(32) for _ in range(nw)],
                        reads=[rng.randrange(0, 4096, 4) for _ in range(nr)])
        tag = 0x10000 + 4 * (i - rng.choice([0, 0, 0, 1, 5]))    # some repeats, some late copies
        data = bytearray(encode_request(record, tag))
        for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
            op = rng.random()
            if op < 0.6:
                data[rng.randrange(min(len(data), 12))] ^= 1 << rng.randrange(8)   # not the tag
            elif op < 0.8:
                del data[rng.randrange(8, len(data)):]
            else:
                data += bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 6)))
        frames.append((bytes(data), False))
    bus, answers, counters = run_engine(frames, seed=3)
    exp_log, exp_answers, exp_counters = reference_engine([f for f, _ in frames])
    assert counters == exp_counters
    assert bus.log == exp_log and answers == exp_answers
    assert min(counters.values()) >= 5    # every outcome was reached


def reference_engine(frames):
    """Independent model of the engine's contract (module docstring of gateware/etherbone.py)."""
    mem, log, answers = {}, [], []
    counters = {"requests": 0, "replays": 0, "stale": 0, "malformed": 0}
    cache = None   # (tag, words)
    for data in frames:
        ok = len(data) >= 16 and data[:2] == b"\x4e\x6f" and data[2] >> 4 == 1 and not data[2] & 1 \
            and data[3] == 0x44
        if ok:
            flags, be, w, r = data[8:12]
            ok = r > 0 and len(data) == 12 + (4 + 4 * w if w else 0) + 4 + 4 * r
        if not ok:
            counters["malformed"] += 1
            continue
        words = struct.unpack(f">{(len(data) - 12) // 4}I", data[12:])
        base, wdata = (words[0], words[1:1 + w]) if w else (0, ())
        tag, raddrs = words[1 + w if w else 0], words[(2 + w) if w else 1:]
        header = b"\x4e\x6f\x10\x44\x00\x00\x00\x00"
        if cache and tag == cache[0]:
            counters["replays"] += 1
            answers.append(header + bytes([0, be, len(cache[1]), 0])
                           + struct.pack(f">{1 + len(cache[1])}I", tag, *cache[1]))
            continue
        if cache and (tag - cache[0]) % (1 << 32) >= 1 << 31:
            counters["stale"] += 1
            answers.append(header + bytes([0, be, 0, 1]) + struct.pack(">2I", tag, cache[0]))
            continue
        counters["requests"] += 1
        addr = base
        for word in wdata:
            if addr < WINDOW:
                mem[addr >> 2] = word
                log.append(("W", (addr >> 2) & 0xFFFF, word))
            if not flags & 0x40:
                addr = (addr + 4) & 0xFFFFFFFF
        values = []
        for a in raddrs:
            v = 0
            if a < WINDOW:
                v = mem.get(a >> 2, initial(a >> 2))
                log.append(("R", a >> 2, v))
            values.append(v)
        cache = (tag, values)
        answers.append(header + bytes([0, be, r, 0]) + struct.pack(f">{1 + r}I", tag, *values))
    return log, answers, counters


# SLIP + CRC ------------------------------------------------------------------------------------


def run_deframer(stream_bytes, errors_at=(), ready_p=1.0):
    """The frames the deframer makes of ``stream_bytes``, its output ready with probability
    ``ready_p`` each cycle, and its bad-frame count."""
    dut = SlipCrcRx()
    frames, current = [], bytearray()
    out = {}
    rng = random.Random(7)

    async def bench(ctx):
        n, idle = 0, 0
        while n < len(stream_bytes) or idle < 20:    # then drain what the deframer holds
            offer = n < len(stream_bytes)
            ctx.set(dut.i.valid, offer)
            if offer:
                ctx.set(dut.i.payload, {"data": stream_bytes[n], "error": n in errors_at})
            ready = rng.random() < ready_p
            ctx.set(dut.o.ready, ready)
            taken = offer and ctx.get(dut.i.ready)
            if ready and ctx.get(dut.o.valid):
                current.append(ctx.get(dut.o.payload.data))
                if ctx.get(dut.o.payload.last):
                    frames.append((bytes(current), bool(ctx.get(dut.o.payload.drop))))
                    current.clear()
            await ctx.tick()
            n += taken
            idle = 0 if offer else idle + 1
        out["bad"] = ctx.get(dut.bad_frames)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert not current
    return frames, out["bad"]


@pytest.mark.parametrize("ready_p", [1.0, 0.3])
def test_deframer_checks_crc_and_unescapes(ready_p):
    payloads = [bytes([0xC0, 0xDB, 0x01, 0xDC, 0xDD, 0xC0]), bytes(range(256)), b"\x00"]
    stream = b"".join(slip_frame(p) for p in payloads)
    frames, bad = run_deframer(stream, ready_p=ready_p)
    assert frames == [(p, False) for p in payloads] and bad == 0
    corrupt = bytearray(slip_frame(payloads[1]))
    corrupt[100] ^= 0x10
    frames, bad = run_deframer(b"\xc0\xc0\x01\x02\xc0" + bytes(corrupt) + slip_frame(b"ok"), ready_p=ready_p)
    damaged = bytearray(payloads[1])
    damaged[99] ^= 0x10
    assert frames == [(bytes(damaged), True), (b"ok", False)] and bad == 2   # short and corrupt


def test_deframer_line_error_drops_the_frame():
    stream = slip_frame(b"first") + slip_frame(b"second")
    frames, bad = run_deframer(stream, errors_at={3})
    assert frames == [(b"fist", True), (b"second", False)] and bad == 1   # item 3 was the "r"


def test_framer_escapes_and_appends_crc():
    payloads = [bytes([0xC0, 0xDB, 0x55]), bytes(range(256)), b"\x42"]
    dut = SlipCrcTx()
    got = bytearray()

    async def bench(ctx):
        rng = random.Random(1)
        items = [(b, i == len(p) - 1) for p in payloads for i, b in enumerate(p)]
        for _ in range(4000):
            ctx.set(dut.i.valid, bool(items))
            if items:
                ctx.set(dut.i.payload, {"data": items[0][0], "last": items[0][1]})
            ready = rng.random() < 0.6
            ctx.set(dut.o.ready, ready)
            if ready and ctx.get(dut.o.valid):
                got.append(ctx.get(dut.o.payload))
            if items and ctx.get(dut.i.ready):
                items.pop(0)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert bytes(got) == b"".join(slip_frame(p) for p in payloads)


# the whole bridge over its UART pins ---------------------------------------------------------------


def test_crc_byte_order_matches_zlib():
    body = b"123456789"
    assert slip_frame(body)[1:-1] == body + struct.pack("<I", 0xCBF43926) == body + struct.pack("<I", zlib.crc32(body))


def drive_bridge(requests, *, clk_hz=16_000_000, baud=4_000_000, gap_bits=30):
    """Send SLIP frames (``requests``: bytes) into a UartBridge's rx pin at ``baud``, one
    after the other with ``gap_bits`` idle bits between them and waiting for each answer;
    return (bus, decoded answer packets, bad frames seen by the host, counters)."""
    from test_uart import decode_line, line_levels

    dut = UartBridge(clk_hz, baud, rx_fifo_depth=64)
    div = dut.divisor
    bus = BusModel()
    tx_levels = []
    out = {}

    async def bench(ctx):
        for frame in requests:
            levels = line_levels(list(frame), div, idle=gap_bits * div)
            for level in levels:
                bus.step(ctx, dut)
                ctx.set(dut.rx, level)
                tx_levels.append(ctx.get(dut.tx))
                await ctx.tick()
            # the answer: wait until the tx line has been idle for 20 bit times
            quiet = 0
            while quiet < 20 * div:
                bus.step(ctx, dut)
                tx_levels.append(ctx.get(dut.tx))
                quiet = quiet + 1 if tx_levels[-1] else 0
                await ctx.tick()
        for name in ("requests", "replays", "stale", "malformed", "bad_frames", "rx_errors"):
            out[name] = ctx.get(getattr(dut, name))

    sim = Simulator(dut)
    sim.add_clock(1 / clk_hz)
    sim.add_testbench(bench)
    sim.run()
    decoder = SlipDecoder()
    packets = decoder.feed(bytes(b for _, b in decode_line(tx_levels, div)))
    return bus, packets, decoder.bad_frames, out


def test_bridge_over_the_uart_pins():
    w = encode_request(Record(base=0x80, data=[0x11223344, 0xC0DBC0DB], reads=[0x84, 0x80]), 0x200)
    r = encode_request(Record(reads=[0x84, 0x4]), 0x204)
    corrupt = bytearray(slip_frame(r))
    corrupt[12] ^= 0x04
    frames = [slip_frame(w), slip_frame(w), bytes(corrupt), slip_frame(r),
              slip_frame(encode_request(Record(reads=[0]), 0x1FC))]
    bus, packets, host_bad, counters = drive_bridge(frames)
    assert [decode_answer(p) for p in packets[:4]] == [
        (0x200, [0xC0DBC0DB, 0x11223344]), (0x200, [0xC0DBC0DB, 0x11223344]),
        (0x204, [0xC0DBC0DB, initial(1)])] + [None]
    assert decode_stale(packets[3]) == (0x1FC, 0x204)
    assert [a for a in bus.log if a[0] == "W"] == [("W", 0x20, 0x11223344), ("W", 0x21, 0xC0DBC0DB)]
    assert host_bad == 0
    assert counters == {"requests": 2, "replays": 1, "stale": 1, "malformed": 0, "bad_frames": 1,
                        "rx_errors": 0}


def test_bridge_signature_and_divisor_check():
    bridge = UartBridge(125_000_000, 1_000_000)
    assert bridge.divisor == 125
    members = dict(bridge.signature.members)
    bridge._MustUse__silence = True     # inspected, not elaborated
    assert {name: (m.flow.name, Shape.cast(m.shape).width) for name, m in members.items()
            if name in ("rx", "tx", "csr_addr", "csr_r_stb", "csr_r_data", "csr_w_stb", "csr_w_data")} == {
        "rx": ("In", 1), "tx": ("Out", 1), "csr_addr": ("Out", 16), "csr_r_stb": ("Out", 1),
        "csr_r_data": ("In", 32), "csr_w_stb": ("Out", 1), "csr_w_data": ("Out", 32)}
    with pytest.raises(ValueError, match="off by"):
        UartBridge(12_000_000, 1_600_000)
