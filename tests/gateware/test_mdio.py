"""MDIO master and PHY manager (gateware/mdio.py) against a golden clause 22 PHY model: MDC
frequency and duty, set-up/hold of the master's data around MDC's rising edge, turnaround
and bus ownership (no contention), read and write frames, a missing PHY, and the bring-up
sequence (reset, identifier, advertisement writes, link/speed polling, host raw access)."""

import pytest
from amaranth.sim import Simulator

from wirespeed.gateware.mdio import (
    REG_ANAR,
    REG_BMCR,
    REG_BMSR,
    REG_GCTRL,
    REG_GSTAT,
    REG_PHYID1,
    REG_PHYID2,
    SPEED_1000,
    SPEED_NONE,
    SPEED_SLOW,
    MDIOMaster,
    PhyManager,
)

CLK_HZ = 125_000_000
T_SYS = 1 / CLK_HZ


class MdioPhyModel:
    """Clause 22 PHYs on one bus, seen cycle by cycle. ``regs[(addr, reg)]`` is the register
    file; absent addresses do not answer (the line's pull-up reads 1). ``delay`` is the PHY's
    output delay after MDC rises, in sys cycles (clause 22 allows up to 300 ns)."""

    def __init__(self, regs, delay=3):
        self.regs, self.delay = dict(regs), delay
        self.addrs = {a for a, _ in regs}
        self.bits, self.ones = [], 0
        self.in_frame = False
        self.drive = None           # None: released, else the level driven
        self.pending = []           # (cycle, level or None) scheduled output changes
        self.writes, self.reads = [], []
        self.errors = []
        self.rise_cycles = []
        self.master_changes = []

    def line(self, master_o, master_oe):
        if master_oe and self.drive is not None:
            self.errors.append("contention: master and PHY drive MDIO together")
        if master_oe:
            return master_o
        return 1 if self.drive is None else self.drive

    def on_rise(self, cycle, level):
        self.rise_cycles.append(cycle)
        if not self.in_frame:
            if level == 1:
                self.ones += 1
                return
            if self.ones >= 32:
                self.in_frame, self.bits = True, [0]    # the start's first bit
            self.ones = 0
            return
        self.bits.append(level)
        b = self.bits
        if len(b) == 2 and b != [0, 1]:
            self.errors.append(f"bad start {b}")
            self._end()
            return
        if len(b) == 14:   # start, opcode, 5 PHY bits, 5 register bits
            op, addr, reg = b[2:4], _val(b[4:9]), _val(b[9:14])
            self.op, self.addr, self.reg = op, addr, reg
            if op == [1, 0] and addr in self.addrs:
                value = self.regs.get((addr, reg), 0)
                self.reads.append((addr, reg))
                # TA: released for the first bit, 0 for the second, then data MSB first
                levels = [None, 0] + [(value >> (15 - i)) & 1 for i in range(16)]
                for i, lv in enumerate(levels):
                    self.pending.append((cycle + self.delay + i * self.period, lv))
                self.pending.append((cycle + self.delay + 18 * self.period, "release"))
        if len(b) == 32:
            if self.op == [0, 1]:
                if b[14:16] != [1, 0]:
                    self.errors.append(f"write turnaround {b[14:16]}")
                if self.addr in self.addrs:
                    value = _val(b[16:32])
                    self.regs[(self.addr, self.reg)] = value
                    self.writes.append((self.addr, self.reg, value))
            self._end()

    def _end(self):
        self.in_frame, self.bits, self.ones = False, [], 0

    def tick(self, cycle):
        for when, lv in list(self.pending):
            if when <= cycle:
                self.pending.remove((when, lv))
                self.drive = None if lv in (None, "release") else lv


def _val(bits):
    v = 0
    for bit in bits:
        v = (v << 1) | bit
    return v


def attach(sim, pins, model, period_cycles, stop):
    """Add the model as a testbench on ``pins`` (MDIOPinsSignature, master side)."""
    model.period = period_cycles
    state = {"cycle": 0, "mdc": 0, "o": None, "oe": None, "last_rise": -10**9}

    async def bench(ctx):
        while not stop["done"]:
            await ctx.tick()
            c = state["cycle"] = state["cycle"] + 1
            model.tick(c)
            mdc, o, oe = ctx.get(pins.mdc), ctx.get(pins.mdio_o), ctx.get(pins.mdio_oe)
            if oe and (o, oe) != (state["o"], state["oe"]):
                model.master_changes.append((c, mdc))
            level = model.line(o, oe)
            ctx.set(pins.mdio_i, level)
            if mdc and not state["mdc"]:
                model.on_rise(c, level)
                state["last_rise"] = c
            state["mdc"], state["o"], state["oe"] = mdc, o, oe
    sim.add_testbench(bench, background=True)


def run_master(ops, regs, *, delay=3, clk_hz=CLK_HZ):
    """Run MDIO master operations ``(write, phy, reg, value)``; returns the results
    ``(rdata, nack)``, the model and the master."""
    dut = MDIOMaster(clk_hz)
    sim = Simulator(dut)
    sim.add_clock(1 / clk_hz)
    model = MdioPhyModel(regs, delay)
    stop = {"done": False}
    attach(sim, dut.pins, model, 2 * dut.half, stop)
    results, mdc_levels = [], []

    async def bench(ctx):
        for write, phy, reg, value in ops:
            ctx.set(dut.start, 1)
            ctx.set(dut.write, write)
            ctx.set(dut.phy, phy)
            ctx.set(dut.reg, reg)
            ctx.set(dut.wdata, value)
            await ctx.tick()
            ctx.set(dut.start, 0)
            while True:
                await ctx.tick()
                mdc_levels.append(ctx.get(dut.pins.mdc))
                if ctx.get(dut.done):
                    break
            results.append((ctx.get(dut.rdata), ctx.get(dut.nack)))
            for _ in range(5):
                await ctx.tick()
        stop["done"] = True

    sim.add_testbench(bench)
    sim.run()
    return results, model, dut, mdc_levels


def test_read_write_frames_and_missing_phy():
    regs = {(1, REG_PHYID1): 0x600D, (1, REG_PHYID2): 0x8451, (1, REG_ANAR): 0x01E1, (3, REG_BMSR): 0x7949}
    ops = [(0, 1, REG_PHYID1, 0), (0, 1, REG_PHYID2, 0), (1, 1, REG_ANAR, 0x0001), (0, 1, REG_ANAR, 0),
           (0, 3, REG_BMSR, 0), (0, 7, REG_BMSR, 0), (1, 3, 31, 0xA5C3), (0, 3, 31, 0)]
    results, model, _, _ = run_master(ops, regs)
    assert model.errors == []
    assert results[0] == (0x600D, 0) and results[1] == (0x8451, 0)
    assert model.writes == [(1, REG_ANAR, 0x0001), (3, 31, 0xA5C3)]
    assert results[3] == (0x0001, 0)
    assert results[4] == (0x7949, 0)
    assert results[5] == (0xFFFF, 1)        # nobody at address 7: pull-up, turnaround reads 1
    assert results[7] == (0xA5C3, 0)
    assert model.reads == [(1, REG_PHYID1), (1, REG_PHYID2), (1, REG_ANAR), (3, REG_BMSR), (3, 31)]


@pytest.mark.parametrize("delay_ns", [8, 300])
def test_phy_output_delay_up_to_300ns(delay_ns):
    regs = {(0, REG_PHYID1): 0x0141, (0, REG_PHYID2): 0x0DD1}
    results, model, _, _ = run_master([(0, 0, REG_PHYID1, 0), (0, 0, REG_PHYID2, 0)], regs,
                                      delay=max(1, round(delay_ns * 1e-9 * CLK_HZ)))
    assert model.errors == []
    assert results == [(0x0141, 0), (0x0DD1, 0)]


def test_mdc_timing_and_master_setup_hold():
    _, model, dut, mdc = run_master([(1, 2, 5, 0x5555), (0, 2, 5, 0)], {(2, 5): 0})
    # MDC at most 2.5 MHz: period >= 400 ns, high and low >= 160 ns
    assert dut.mdc_hz <= 2.5e6
    rises = model.rise_cycles
    periods = {b - a for a, b in zip(rises, rises[1:]) if b - a < 4 * dut.half}
    assert min(periods) * T_SYS >= 400e-9 - 1e-12
    runs, cur, n = [], mdc[0], 0
    for level in mdc:
        if level == cur:
            n += 1
        else:
            runs.append(n)
            cur, n = level, 1
    assert min(runs[1:]) * T_SYS >= 160e-9 - 1e-12
    # the master changes MDIO only while MDC is low, >= 10 ns after a rising edge and
    # >= 10 ns before the next one
    rise_set = set(rises)
    for cycle, mdc_level in model.master_changes[1:]:
        assert mdc_level == 0, f"MDIO changed with MDC high at cycle {cycle}"
        prev = max((r for r in rises if r <= cycle), default=-10**9)
        nxt = min((r for r in rises if r > cycle), default=10**9)
        assert (cycle - prev) * T_SYS >= 10e-9 and (nxt - cycle) * T_SYS >= 10e-9
        assert cycle not in rise_set
    # 65 rising edges per frame (32 preamble + 32 frame bits + 1 idle), two frames
    assert len(rises) == 130
    assert model.errors == []


def test_mdc_limit():
    with pytest.raises(ValueError, match="2.5 MHz"):
        MDIOMaster(CLK_HZ, mdc_hz=5_000_000)
    assert MDIOMaster(CLK_HZ).mdc_hz == 2_500_000


# PHY manager ------------------------------------------------------------------------------------

MGR_CLK = 10_000_000    # a slow clock keeps MDIO frames short in simulated cycles (4 per bit)


def test_phy_manager_bring_up_and_polling():
    regs = {
        (0, REG_PHYID1): 0x600D, (0, REG_PHYID2): 0x84A2, (0, REG_BMSR): 0x796D, (0, REG_GSTAT): 0x3800,
        (1, REG_PHYID1): 0x600D, (1, REG_PHYID2): 0x84A3, (1, REG_BMSR): 0x7949, (1, REG_GSTAT): 0x0000,
    }
    writes = ((REG_ANAR, 0x0001), (REG_GCTRL, 0x0200), (REG_BMCR, 0x1340))
    dut = PhyManager(MGR_CLK, (0, 1), writes, reset_ms=0.01, settle_ms=0.02, poll_ms=0.01)
    sim = Simulator(dut)
    sim.add_clock(1 / MGR_CLK)
    model = MdioPhyModel(regs, delay=1)
    stop = {"done": False}
    attach(sim, dut.pins, model, 4, stop)
    seen = {}

    async def bench(ctx):
        rst_cycles, cycle = 0, 0
        while ctx.get(dut.state) != 3:
            rst_cycles += ctx.get(dut.phy_rst)
            assert not model.in_frame or not ctx.get(dut.phy_rst)
            await ctx.tick()
            cycle += 1
            assert cycle < 100_000
        seen["rst_cycles"] = rst_cycles
        seen["writes_at_poll"] = list(model.writes)
        for _ in range(2000):           # a few polling rounds
            await ctx.tick()
        seen["status"] = [ctx.get(dut.status[i]) for i in range(2)]
        # the partner of port 1 comes up at 100 Mb/s (no 1000BASE-T ability)
        model.regs[(1, REG_BMSR)] = 0x796D
        for _ in range(2000):
            await ctx.tick()
        seen["status_after"] = ctx.get(dut.status[1])
        # host raw access: write then read back a register of PHY 1
        for write, reg, value in ((1, 0x1C, 0x8C00), (0, 0x1C, 0)):
            ctx.set(dut.req_stb, 1)
            ctx.set(dut.req_write, write)
            ctx.set(dut.req_phy, 1)
            ctx.set(dut.req_reg, reg)
            ctx.set(dut.req_wdata, value)
            await ctx.tick()
            ctx.set(dut.req_stb, 0)
            await ctx.tick()
            assert ctx.get(dut.req_busy)
            n = 0
            while ctx.get(dut.req_busy):
                await ctx.tick()
                n += 1
                assert n < 10_000
        seen["raw"] = (ctx.get(dut.req_rdata), ctx.get(dut.req_nack))
        stop["done"] = True

    sim.add_testbench(bench)
    sim.run()
    assert model.errors == []
    assert seen["rst_cycles"] == dut.reset_cycles
    # identifiers first, then the board's writes, PHY by PHY
    assert seen["writes_at_poll"] == [(0, r, v) for r, v in writes] + [(1, r, v) for r, v in writes]
    assert model.reads[:4] == [(0, REG_PHYID1), (0, REG_PHYID2), (1, REG_PHYID1), (1, REG_PHYID2)]
    s0, s1 = seen["status"]
    assert s0.id == 0x600D84A2 and s0.link == 1 and s0.speed == SPEED_1000 and s0.nack == 0
    assert s0.bmsr == 0x796D and s0.gstat == 0x3800
    assert s1.id == 0x600D84A3 and s1.link == 0 and s1.speed == SPEED_NONE
    after = seen["status_after"]
    assert after.link == 1 and after.speed == SPEED_SLOW
    assert (1, 0x1C, 0x8C00) in model.writes
    assert seen["raw"] == (0x8C00, 0)


def test_phy_manager_reports_missing_phy():
    dut = PhyManager(MGR_CLK, (4,), (), reset_ms=0.01, settle_ms=0.01, poll_ms=0.01)
    sim = Simulator(dut)
    sim.add_clock(1 / MGR_CLK)
    model = MdioPhyModel({(0, REG_BMSR): 0x796D}, delay=1)
    stop = {"done": False}
    attach(sim, dut.pins, model, 4, stop)
    seen = {}

    async def bench(ctx):
        for _ in range(6000):
            await ctx.tick()
        seen["st"] = ctx.get(dut.status[0])
        stop["done"] = True

    sim.add_testbench(bench)
    sim.run()
    st = seen["st"]
    assert st.nack == 1 and st.link == 0 and st.speed == SPEED_NONE and st.id == 0xFFFFFFFF
