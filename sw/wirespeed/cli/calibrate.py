"""``wirespeed calibrate``: the tester's own pipeline delay, measured on a loopback cable (a
loopback DUT in simulation), into a calibration file for ``rfc2544 --calibration``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from .. import parse
from ..calibration import CAL_DEFAULTS, CAL_SIM_DUT, RFC_SIZES, CalibrationError, run_calibration
from ..errors import WirespeedError
from ..results.writer import atomic_write_text
from .app import app
from .common import InputError, config_option, err_console, open_tester, parser, target_option


@app.command()
def calibrate(
    config_file: Annotated[Path | None, config_option()] = None,
    target: Annotated[str, target_option()] = "sim",
    dut: Annotated[str | None, typer.Option(help="sim: the cable, a loopback DUT (default "
                                                 f"'{CAL_SIM_DUT}'); board: a description of the cable.")] = None,
    sizes: Annotated[Any, typer.Option(parser=parser(parse.frame_sizes), metavar="LIST",
                                       help="Frame sizes in bytes (FCS included).")] = ",".join(map(str, RFC_SIZES)),
    out: Annotated[Path, typer.Option(help="The calibration file to write.")] = Path("calibration.json"),
    trial_duration: Annotated[Any, typer.Option(parser=parser(parse.positive_duration), metavar="DURATION",
                                                help="Trial length per size (sim: 1ms, board: 1s).")] = None,
    wait: Annotated[Any, typer.Option(parser=parser(parse.duration), metavar="DURATION",
                                      help="Wait after each trial (sim: 100us, board: 100ms).")] = None,
    cable_delay: Annotated[Any, typer.Option(parser=parser(parse.duration), metavar="DURATION",
                                             help="The loopback cable's own delay (about 5 ns/m), counted as "
                                                  "part of the link, not of the tester (board: default 0ns; "
                                                  "sim: the loopback's delay).")] = None,
) -> None:
    """Measure the tester's fixed pipeline delay with the ports joined by a loopback cable
    (sim: the loopback DUT) and write a calibration file for 'rfc2544 --calibration'."""
    defaults = CAL_DEFAULTS["sim" if target == "sim" else "board"]
    if not out.parent.is_dir():
        raise InputError("--out", f"no directory {out.parent} to write {out.name} in")
    cable_ns = cable_delay
    if target == "sim":
        from wirespeed.sim.dut import parse_dut
        dut = dut or CAL_SIM_DUT
        try:
            spec = parse_dut(dut)
        except ValueError as exc:
            raise InputError("--dut", str(exc)) from None
        impaired = sorted(set(spec.describe().get("impairments", {})) - {"seed"})
        if spec.model != "loopback" or impaired:
            raise InputError("--dut", f"a loopback without impairments (a cable), e.g. '{CAL_SIM_DUT}'; not {dut!r}")
        if cable_ns is not None and cable_ns != spec.delay_ns:
            raise InputError("--cable-delay", f"must equal the loopback's delay ({spec.delay_ns}ns) or be left out")
        cable_ns = spec.delay_ns
    cable_ns = cable_ns or 0
    duration = defaults["trial"] if trial_duration is None else trial_duration
    wait_ns = defaults["wait"] if wait is None else wait
    try:
        with open_tester(target, dut) as tester:
            assert tester.ident is not None     # connecting identified the tester
            with err_console.status("calibrating") as status:
                try:
                    cal = run_calibration(tester, tester.ident, tester.target, sizes, duration_ns=duration,
                                          wait_ns=wait_ns, cable_delay_ns=cable_ns, dut=tester.dut,
                                          progress=lambda size: status.update(f"calibrating: {size} B"))
                except CalibrationError as exc:
                    field, _, message = str(exc).partition(": ")
                    raise InputError(field, message, exit_code=1) from None
                except WirespeedError as exc:
                    raise InputError("calibration", str(exc), exit_code=1) from None
    except KeyboardInterrupt:
        err_console.print(f"wirespeed: interrupted; no calibration written ({out} left as it was)",
                          highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
    try:
        atomic_write_text(out, cal.model_dump_json(indent=2) + "\n")
    except OSError as exc:
        raise InputError("--out", f"cannot write {out}: {exc.strerror or exc}", exit_code=1) from None
    table = Table(title=f"tester pipeline delay (cable {cable_ns} ns subtracted)")
    for column in ("direction", "frame size B", "pipeline delay ns", "min ns", "max ns", "frames"):
        table.add_column(column, justify="right")
    for p in cal.points:
        table.add_row(f"{p.tx_port} -> {p.rx_port}", str(p.frame_size), str(p.pipeline_delay_ns),
                      str(p.bit_forwarding.min_ns), str(p.bit_forwarding.max_ns), f"{p.frames:,}")
    Console().print(table)
    err_console.print(f"calibration: {out}", highlight=False, soft_wrap=True)
