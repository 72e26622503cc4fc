"""Calibration of the tester's fixed pipeline delay on a loopback cable.

Every latency the analyzers measure includes the tester's own pipeline: from the transmit
timestamp to the first byte on the wire, and from the first byte on the wire to the receive
timestamp (``TX_PIPELINE_NS`` + ``RX_PIPELINE_NS`` = 200 ns in this gateware,
docs/performance.md). A calibration run measures it with the ports joined by a cable (in
simulation: the ``loopback`` DUT): per direction and frame size, a short trial at 100 % of
line rate, latency in the bit-forwarding definition (first bit in to first bit out; the
store-and-forward value of a cable is negative, ``-8 * L`` ns plus the pipeline, which the
analyzer would clamp at 0, so it is derived, not measured). A cable's latency must be
constant: the spread (max - min) must stay within one 8 ns clock, else the run fails.

pipeline delay = mean measured latency - cable delay (rounded to the ns)

The result is a self-describing JSON file (:class:`Calibration`, format
``wirespeed-calibration/1``): tool version, gateware identification, target, DUT, parameters
and, per direction and size, the pipeline delay and the measured figures. A run with
``--calibration FILE`` subtracts the delay from every latency figure it reports, after
checking that the file was made with the same gateware on the same kind of target.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final, Literal

from pydantic import BaseModel, Field, ValidationError

from . import __version__
from .errors import WirespeedError
from .ethernet import line_rate_fps
from .host.models import GatewareId
from .traffic import Flow, flow_stream

__all__ = ["Calibration", "CalibrationPoint", "CalibrationError", "DefinitionStats", "FORMAT", "CLOCK_NS",
           "RFC_SIZES", "calibration_flows", "run_calibration", "load_calibration", "target_kind", "delay_at"]

FORMAT: Final = "wirespeed-calibration/1"
CLOCK_NS = 8
RFC_SIZES = (64, 128, 256, 512, 1024, 1280, 1518)
METHOD = ("loopback cable between the ports; per frame size one trial at 100 % of line rate in every "
          "direction at once; latency measured first bit in to first bit out (lat_def 0); "
          "pipeline_delay_ns = round(mean latency - cable_delay_ns); spread (max - min) at most one "
          f"{CLOCK_NS} ns clock")


class CalibrationError(WirespeedError):
    """A calibration run or file that cannot be used (one line: ``<field>: <what is allowed>``)."""


class DefinitionStats(BaseModel):
    min_ns: int
    max_ns: int
    mean_ns: float
    source: Literal["measured", "derived"]


class CalibrationPoint(BaseModel):
    """The pipeline delay of one direction at one frame size."""

    tx_port: int = Field(ge=0)
    rx_port: int = Field(ge=0)
    frame_size: int = Field(ge=16)
    pipeline_delay_ns: int = Field(ge=0, description="subtracted from every latency of this direction and size")
    frames: int = Field(ge=1)
    bit_forwarding: DefinitionStats
    store_and_forward: DefinitionStats


def delay_at(values: Mapping[int, int], frame_size: int | str) -> int | None:
    """One direction's pipeline delay at ``frame_size`` (bytes, or a mix's label) from
    ``values`` (calibrated size in bytes -> ns): its own, or the direction's value when it is
    the same at every size calibrated (the pipeline does not depend on the size); None when
    neither."""
    if isinstance(frame_size, int) and frame_size in values:
        return values[frame_size]
    if len(set(values.values())) == 1:
        return next(iter(values.values()))
    return None


class Calibration(BaseModel):
    """A calibration file."""

    format: Literal["wirespeed-calibration/1"] = FORMAT
    tool: dict[str, str] = Field(default_factory=lambda: {"name": "wirespeed", "version": __version__})
    created_utc: str = Field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))
    target: str
    dut: dict[str, Any] = Field(default_factory=dict)
    gateware: GatewareId
    method: str = METHOD
    cable_delay_ns: int = Field(0, ge=0)
    trial_duration_ns: int = Field(gt=0)
    wait_ns: int = Field(ge=0)
    points: list[CalibrationPoint] = Field(min_length=1)

    def pipeline_ns(self, tx_port: int, rx_port: int, frame_size: int) -> int:
        """The pipeline delay of ``tx_port`` -> ``rx_port`` at ``frame_size`` bytes. A size
        not calibrated takes the direction's value only when it is the same at every size
        calibrated (the pipeline does not depend on the size); else CalibrationError."""
        values = {p.frame_size: p.pipeline_delay_ns for p in self.points
                  if (p.tx_port, p.rx_port) == (tx_port, rx_port)}
        if not values:
            raise CalibrationError(f"--calibration: no direction port {tx_port} -> port {rx_port} in the "
                                   f"file; it has {', '.join(sorted(self.directions()))}")
        delay = delay_at(values, frame_size)
        if delay is not None:
            return delay
        raise CalibrationError(f"--calibration: no {frame_size} B entry for port {tx_port} -> port {rx_port} and "
                               f"the delay differs between sizes; calibrated sizes: "
                               f"{','.join(map(str, sorted(values)))}")

    def directions(self) -> set[str]:
        return {f"{p.tx_port}->{p.rx_port}" for p in self.points}

    def check_usable(self, ident: GatewareId, target: str, needs: Sequence[tuple[int, int, int]]) -> None:
        """Refuse (CalibrationError, one line) a file made with other gateware, on another
        kind of target, or without a value for each (tx_port, rx_port, size) of ``needs``."""
        mine, theirs = self.gateware, ident
        for field in ("magic", "version", "map_hash", "clk_hz", "n_ports"):
            if getattr(mine, field) != getattr(theirs, field):
                raise CalibrationError(
                    f"--calibration: gateware.{field} is {getattr(mine, field):#x} in the file but "
                    f"{getattr(theirs, field):#x} on the target; calibrate again with this gateware "
                    "(wirespeed calibrate)")
        if target_kind(self.target) != target_kind(target):
            raise CalibrationError(f"--calibration: target is {self.target!r} in the file, this run's is "
                                   f"{target!r}; a calibration holds only for the kind of target it was "
                                   "made on (sim or a board)")
        for tx, rx, size in needs:
            self.pipeline_ns(tx, rx, size)

    def summary(self) -> dict[str, Any]:
        """Pipeline delay per direction and size, for results and messages."""
        table: dict[str, dict[str, int]] = {}
        for p in self.points:
            table.setdefault(f"{p.tx_port}->{p.rx_port}", {})[str(p.frame_size)] = p.pipeline_delay_ns
        return table


def target_kind(target: str) -> str:
    return "sim" if target == "sim" else "board"


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(part) for part in err["loc"]) or "file"
    message = err["msg"]
    if err["type"] == "literal_error" and where == "format":
        message = f"must be {FORMAT!r}"
    return f"field {where}: {message}"


def load_calibration(path: Path) -> Calibration:
    """Read a calibration file; every problem is one CalibrationError line naming the field."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CalibrationError(f"--calibration: no file {path} (make one with wirespeed calibrate)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"--calibration: cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CalibrationError(f"--calibration: {path} is not JSON ({exc.msg} at line {exc.lineno}); expected a "
                               f"{FORMAT} file from wirespeed calibrate") from None
    if not isinstance(data, dict):
        raise CalibrationError(f"--calibration: {path} is not a {FORMAT} file (a JSON object expected)")
    if data.get("format") != FORMAT:
        raise CalibrationError(f"--calibration: field format of {path} is {data.get('format')!r}, must be {FORMAT!r}")
    try:
        return Calibration.model_validate(data)
    except ValidationError as exc:
        raise CalibrationError(f"--calibration: {path}: {_first_error(exc)}") from None


# The calibration run ------------------------------------------------------------------------------------


def calibration_flows(n_ports: int, frame_size: int, can_carry=None) -> list[Flow]:
    """Both directions of each port pair (0, 1), (2, 3), ...: the ports a loopback cable joins;
    with ``can_carry(tx, rx)``, only the directions it allows (a unidirectional build)."""
    flows = []
    for a in range(0, n_ports - 1, 2):
        for tx, rx in ((a, a + 1), (a + 1, a)):
            if can_carry is None or can_carry(tx, rx):
                flows.append(Flow(tx_port=tx, rx_port=rx, spec=flow_stream(tx, rx, frame_size)))
    return flows


def run_calibration(device, ident: GatewareId, target: str, sizes: Sequence[int], *, duration_ns: int,
                    wait_ns: int, cable_delay_ns: int = 0, dut: dict[str, Any] | None = None,
                    progress=None) -> Calibration:
    """Measure the pipeline delay of every direction at every size of ``sizes`` on a tester
    whose ports are joined by a cable of ``cable_delay_ns``. ``progress(size)`` is called before
    each size. Raises CalibrationError when frames are lost or the latency is not constant."""
    if device.n_ports < 2:
        raise CalibrationError("--target: calibration needs a tester with two ports joined by a cable")
    points = []
    for size in sizes:
        if progress:
            progress(size)
        flows = calibration_flows(device.n_ports, size,
                                  lambda tx, rx: device.has_generator(tx) and device.has_analyzer(rx))
        if not flows:
            raise CalibrationError("--target: no port of this gateware both sends to and receives from its pair")
        trial = device.run_trial(flows, line_rate_fps(size), duration_ns, wait_ns, lat_def=0)
        for flow in flows:
            tx, rx = trial.counters[flow.tx_port], trial.counters[flow.rx_port]
            where = f"port {flow.tx_port} -> port {flow.rx_port}, {size} B"
            if rx.rx_frames == 0:
                raise CalibrationError(f"calibration: {where}: no test frame received (sent {tx.tx_frames}); "
                                       "join the ports with a loopback cable")
            if rx.rx_frames != tx.tx_frames or rx.seq_errors or rx.fcs_errors:
                raise CalibrationError(f"calibration: {where}: sent {tx.tx_frames}, received {rx.rx_frames}, "
                                       f"sequence errors {rx.seq_errors}, FCS errors {rx.fcs_errors}: a cable "
                                       "loses nothing; check the loopback cable")
            spread = rx.lat_max - rx.lat_min
            if spread > CLOCK_NS:
                raise CalibrationError(f"calibration: {where}: latency not constant (min {rx.lat_min} ns, max "
                                       f"{rx.lat_max} ns: spread {spread} ns, more than one {CLOCK_NS} ns clock); "
                                       "only a cable may join the ports, no DUT or switch")
            mean = rx.lat_sum / rx.rx_frames
            if round(mean - cable_delay_ns) < 0:
                raise CalibrationError(f"--cable-delay: {cable_delay_ns} ns is more than the latency measured on "
                                       f"{where} ({mean:.1f} ns); give the cable's own delay (about 5 ns/m)")
            shift = 8 * size
            points.append(CalibrationPoint(
                tx_port=flow.tx_port, rx_port=flow.rx_port, frame_size=size,
                pipeline_delay_ns=round(mean - cable_delay_ns), frames=rx.rx_frames,
                bit_forwarding=DefinitionStats(min_ns=rx.lat_min, max_ns=rx.lat_max, mean_ns=mean, source="measured"),
                store_and_forward=DefinitionStats(min_ns=rx.lat_min - shift, max_ns=rx.lat_max - shift,
                                                  mean_ns=mean - shift, source="derived")))
    return Calibration(target=target, dut=dut or {}, gateware=ident, cable_delay_ns=cable_delay_ns,
                       trial_duration_ns=duration_ns, wait_ns=wait_ns, points=points)


# The default simulation's automatic calibration ---------------------------------------------------------

CAL_SIM_DUT = "loopback:delay=0ns"
#: calibration trials on a cable: short (the delay is constant), a short wait (nothing is queued)
CAL_DEFAULTS = {"sim": {"trial": 1_000_000, "wait": 100_000}, "board": {"trial": 1_000_000_000, "wait": 100_000_000}}


def auto_calibration(sizes: Sequence[int], on_status=None) -> Calibration:
    """The calibration of the default sim target: the same simulation with a zero-delay loopback
    (a cable), one short trial per frame size (ConnectError, CalibrationError)."""
    from .host.tester import connect

    with connect("sim", CAL_SIM_DUT, on_status=on_status) as tester:
        if on_status:
            on_status("calibrating the tester pipeline delay on a loopback simulation")
        assert tester.ident is not None         # connect() identified the tester
        try:
            return run_calibration(tester, tester.ident, "sim", sizes, duration_ns=CAL_DEFAULTS["sim"]["trial"],
                                   wait_ns=CAL_DEFAULTS["sim"]["wait"], cable_delay_ns=0, dut=tester.dut)
        finally:
            if on_status:
                on_status(None)
