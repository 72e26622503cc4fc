"""``wirespeed capture``: send test frames from one port through the DUT and capture them on the
other into a pcap (the gateware capture block)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Annotated, Any

import typer

from wirespeed import regs

from .. import parse
from ..errors import WirespeedError
from ..host.device import Device
from .app import app
from .common import InputError, config_option, dut_option, open_tester, parser, target_option

CAPTURE_SETTLE_NS = 1_000_000    # tester time to wait after the generator stops, for frames in flight


def _parse_size_spec(text: str):
    from ..traffic import SizeSpec

    try:
        return SizeSpec.parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).splitlines()[0]) from None


def _parse_trigger(text: str) -> str:
    from ..capture import TRIGGERS

    if text not in TRIGGERS:
        raise typer.BadParameter(f"one of {', '.join(TRIGGERS)}; not {text!r}")
    return text


@app.command()
def capture(
    out: Annotated[Path, typer.Option(help="The pcap file to write (nanosecond timestamps).")],
    config_file: Annotated[Path | None, config_option()] = None,
    target: Annotated[str, target_option()] = "sim",
    dut: Annotated[str | None, dut_option()] = None,
    port: Annotated[int, typer.Option(min=0, metavar="N",
                                      help="The receiving (capturing) port; the other port sends.")] = 1,
    count: Annotated[int, typer.Option(min=1, metavar="N", help="Frames to send and to capture (1 or more).")] = 16,
    size: Annotated[Any, typer.Option(parser=_parse_size_spec, metavar="SIZE",
                                      help="Frame size (FCS included), or a size spec: 64-1518/64, "
                                           "rand:64-1518, seq:64,1518, imix:aaaaaaag.")] = "64",
    rate: Annotated[Any, typer.Option(parser=parser(parse.percentage("10")), metavar="PCT",
                                      help="Send rate, % of line rate.")] = "10",
    snaplen: Annotated[int, typer.Option(min=16, max=1024, metavar="BYTES",
                                         help="Bytes kept per frame, 16..1024.")] = 128,
    trigger: Annotated[Any, typer.Option(parser=_parse_trigger, metavar="WHEN",
                                         help="first: at the first frame; fcs: the first with a bad FCS; "
                                              "not_test: the first that is not a test frame.")] = "first",
    udp_checksum: Annotated[bool, typer.Option("--udp-checksum", help="Send frames with UDP checksums.")] = False,
) -> None:
    """Send test frames from one port through the DUT and capture them on the other into a pcap."""
    if not out.parent.is_dir():
        raise InputError("--out", f"no directory {out.parent} to write {out.name} in")
    try:
        with open_tester(target, dut) as device:
            frames, state = _capture_run(device, port=port, count=count, size=size, rate_pct=rate,
                                         snaplen=snaplen, trigger=trigger, udp_checksum=udp_checksum)
            from ..capture import write_pcap
            try:
                write_pcap(out, frames)
            except OSError as exc:
                raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}", exit_code=1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    note = "" if state == "done" else f" (capture {state}: fewer frames than --count)"
    typer.echo(f"captured {len(frames)} frames on port {port}{note}: {out}")


def _capture_run(device: Device, *, port: int, count: int, size, rate_pct: float, snaplen: int, trigger: str,
                 udp_checksum: bool = False, settle_ns: int = CAPTURE_SETTLE_NS):
    """Send ``count`` frames of one stream from the port next to ``port`` and capture on
    ``port``; returns (captured frames, final capture state)."""
    from ..capture import STATES, arm_capture, read_capture
    from ..traffic import PortProgram, StreamSpec, error_text, tester_ip, tester_mac

    n = device.n_ports
    if not 0 <= port < n:
        raise InputError("--port", f"0..{n - 1} on this tester, not {port}")
    if n < 2:
        raise InputError("--port", "the tester needs a second port to send from")
    if regs.port(port).cap.arm not in device.regmap:
        raise InputError("--port", f"port {port} has no capture block in this gateware")
    depth = device.regmap[regs.port(port).cap.index].depth
    if count > depth:
        raise InputError("--count", f"1..{depth} frames (the capture block's index), not {count}")
    tx = (port + 1) % n
    if not device.has_generator(tx):
        raise InputError("--port", f"port {tx}, which would send to port {port}, has no generator in this gateware")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            stream = StreamSpec(src_mac=tester_mac(tx), dst_mac=tester_mac(port), src_ip=tester_ip(tx),
                                dst_ip=tester_ip(port), size=size, udp_checksum=udp_checksum)
            program = PortProgram(port=tx, streams=(stream,), rate_pct=rate_pct, clk_hz=device.clk_hz)
            compiled = program.compile()
    except ValueError as exc:
        raise InputError("--size", error_text(exc)) from None
    stream_id = compiled.streams[0].stream_id
    cap = regs.port(port).cap
    try:
        device.stop()
        for p in range(n):
            if p != tx:
                device.disable_generator(p)
        device.load_program(tx, compiled, count=count)
        if device.has_analyzer(port):
            device.write(regs.port(port).ana.stream_group, stream_id >> 4)
        device.clear()
        arm_capture(device, port, trigger=trigger, count=count, snaplen=snaplen)
        started = device.start()
        expected = int(count * 1e9 / compiled.total_fps) + 1
        deadline = started + expected + 1_000_000 + expected // 10
        running = regs.port(tx).gen.running
        values = device.wait_until([cap.state, running],
                                   lambda v: v[cap.state] == 3 or not v[running],
                                   expected_ns=started + expected, deadline_ns=deadline)
        if values[cap.state] != 3:
            device.wait_ns(settle_ns)
        state = STATES[device.read(cap.state)]
        return read_capture(device, port), state
    except WirespeedError as exc:
        raise InputError("run", str(exc), exit_code=1) from None
