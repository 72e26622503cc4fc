"""``wirespeed.connect(target)``: the tester, simulated or on a board, as one object.

    with wirespeed.connect("sim", dut="router:rate=400k,queue=256,latency=20us") as tester:
        print(tester.ident.version_text, tester.n_ports, tester.clk_hz)

``target`` is ``sim`` (a Verilator simulation of the gateware, started here and stopped when
the block ends, with the simulated DUT ``dut``), ``udp://HOST[:PORT]`` (a board's Etherbone
over UDP) or ``serial://DEVICE[?baud=N]`` / ``socket://HOST:PORT`` (a board's management UART).
The tester's register map follows the configuration its gateware reports (``id.config``); a
tester whose identity does not match is refused. Every failure to reach or use the target is a
:class:`ConnectError`: one line naming the option at fault.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import ConnectError, WirespeedError
from ..traffic import Flow
from ..transport import EtherboneTransport, Transport, open_target
from .device import Device

__all__ = ["connect", "Tester", "ConnectError", "MANAGEMENT", "OPTIONAL_BLOCKS", "RtlDut"]

#: how the host reaches the simulated tester (``management``)
MANAGEMENT = {
    "etherbone": "the simulation harness's Etherbone server on the tester's register bus (fast)",
    "uart": "the boards' management path: Etherbone records over the gateware UART bridge "
            "(docs/management.md), through a simulated serial line",
}
#: what a build may leave out (TesterConfig attribute -> its name in messages)
OPTIONAL_BLOCKS = {"stream_stats": "per-stream receive statistics", "responder": "the ARP/ND responder"}
DUT_EXAMPLE = "router:rate=400k,queue=256,latency=20us"


class RtlDut:
    """A Verilog design simulated with the tester as the DUT (``--dut-rtl FILE...``,
    ``--dut-rtl-include DIR...``, ``--dut-rtl-filelist FILE...``, ``--dut-rtl-top NAME``):
    its files as read from ``cwd`` (default: the current folder)."""

    def __init__(self, sources: Sequence[Path | str] = (), *, include_dirs: Sequence[Path | str] = (),
                 file_lists: Sequence[Path | str] = (), top: str | None = None, cwd: Path | str | None = None):
        self.fields: dict[str, Any] = {
            "sources": [str(p) for p in sources], "include_dirs": [str(p) for p in include_dirs],
            "file_lists": [str(p) for p in file_lists], "top": top, "cwd": str(cwd or Path.cwd())}

    @classmethod
    def recorded(cls, dut: dict[str, Any]) -> RtlDut:
        """The design a run's results describe (``dut``, model rtl)."""
        return cls(dut.get("sources") or [dut.get("path")], include_dirs=dut.get("include_dirs", ()),
                   file_lists=dut.get("file_lists", ()), top=dut.get("top"), cwd=dut.get("cwd"))

    def spec(self) -> Any:
        from wirespeed.sim.dut_rtl import RtlDutSpec

        try:
            return RtlDutSpec(**self.fields)
        except ValueError as exc:
            errors = getattr(exc, "errors", None)
            msg = errors()[0]["msg"].removeprefix("Value error, ") if callable(errors) else str(exc)
            field, _, message = msg.partition(": ")
            raise ConnectError(field if message else "--dut-rtl", message or msg) from None


def sim_dut_spec(dut: str | RtlDut | None, addresses: Mapping[int, Any] | None = None) -> Any:
    """The simulated DUT of ``dut`` set up for the tester ports' own ``addresses`` (port ->
    PortAddress; None or a port left out: the defaults); ConnectError when missing or malformed,
    or naming ``--address`` when the DUT cannot work with them."""
    if isinstance(dut, RtlDut):
        return dut.spec()
    try:
        from wirespeed.sim.dut import parse_dut
    except ImportError as exc:
        raise ConnectError("--target", f"sim needs the wirespeed.sim package ({exc})") from None
    if not dut:
        raise ConnectError("--dut", f"required with --target sim, e.g. '{DUT_EXAMPLE}'")
    try:
        spec = parse_dut(dut)
    except ValueError as exc:
        raise ConnectError("--dut", str(exc)) from None
    why = spec.unavailable()
    if why:
        raise ConnectError("--dut", why)
    try:
        return spec.with_addresses(addresses or {})
    except ValueError as exc:
        raise ConnectError("--address", str(exc)) from None


def describe_dut(dut: str | RtlDut | None, target: str, addresses: Mapping[int, Any] | None = None) -> dict[str, Any]:
    """The DUT as the results describe it (``addresses``: as :func:`sim_dut_spec`)."""
    if target != "sim":
        return {"description": dut} if isinstance(dut, str) and dut else {}
    from wirespeed.sim.dut import profile_description

    description: dict[str, Any] = sim_dut_spec(dut, addresses).describe()
    return description | (profile_description(dut) if isinstance(dut, str) else {})


class Tester(Device):
    """A connected tester (see the module doc): the register map, identification, commands and
    trials of :class:`~wirespeed.host.device.Device`, plus where it is (``target``), what DUT it
    measures (``dut``: the results' description of it) and, in simulation, the DUT's control
    window (``control``)."""

    def __init__(self, transport: Transport, regmap: Any, *, target: str, dut: dict[str, Any],
                 control: Transport | None = None, config: Any = None, config_word: int | None = None):
        super().__init__(transport, regmap)
        self.target, self.dut, self.control, self.config, self.config_word = target, dut, control, config, config_word
        #: what the results should say of how the tester was had (a stale lock taken over)
        self.notes: list[str] = []

    @property
    def is_simulation(self) -> bool:
        return self.target == "sim"

    def require(self, block: str, field: str, why: str) -> None:
        """ConnectError naming ``field`` when this build has no ``block`` (an
        :data:`OPTIONAL_BLOCKS` key)."""
        if self.config is not None and not getattr(self.config, block):
            raise ConnectError(field, f"{self.transport.url}: its gateware (id.config {self.config_word:#010x}) was "
                                      f"built without {OPTIONAL_BLOCKS[block]}, which {why} (docs/performance.md, "
                                      "build configurations)")

    def check_directions(self, flows: Sequence[Flow], field: str) -> None:
        """ConnectError when this build cannot carry ``flows`` (a one-way board build)."""
        try:
            self.check_flows(flows)
        except ValueError as exc:
            raise ConnectError(field, str(exc)) from None

    def reset_action(self) -> Callable[[], None]:
        """The simulated DUT's reset through the simulation's control window."""
        from wirespeed.sim.control import DutControl

        control = DutControl(self.control or self.transport)

        def reset() -> None:
            if not control.reset():
                raise WirespeedError("the simulated DUT did not take the reset: give it reboot=TIME (e.g. --dut "
                                     "'router:rate=400k,reboot=1ms'), and a trial long enough for the last reset "
                                     "to end")
        return reset


@contextlib.contextmanager
def connect(target: str = "sim", dut: str | RtlDut | None = None, *, management: str = "etherbone",
            uart_faults: str | None = None, requires: Sequence[tuple[str, str, str]] = (),
            on_status: Callable[[str | None], None] | None = None, progress: Callable[..., None] | None = None,
            check_identity: bool = True, command: str | None = None,
            pcap_wire: Path | None = None, addresses: Mapping[int, Any] | None = None) -> Iterator[Tester]:
    """The tester at ``target`` (see the module doc), held for the block: a board by its lock
    (:func:`wirespeed.locks.tester_lock`: a second user is refused, naming the first; a
    simulation is the caller's own). ``requires``: ``(field, block, why)`` for each optional
    gateware block the caller needs (:meth:`Tester.require`); ``on_status`` is told what slow step
    is under way (a first simulation start builds it) and None when it is over, ``progress`` the
    stages of such a build (:func:`wirespeed.sim.build.ensure_binary`); ``command``: what the
    lock says the holder runs; ``pcap_wire``: a simulation writes every frame on its four wires
    to this pcapng file (sim/harness/pcap_wire.h); ``addresses``: the tester ports' own
    addresses (port -> PortAddress) a simulated DUT is set up for (a router routes to them)."""
    if management not in MANAGEMENT:
        raise ConnectError("--management", f"{' or '.join(MANAGEMENT)}; not {management!r}")
    if management != "etherbone" and target != "sim":
        raise ConnectError("--management", "applies to --target sim only (a board is reached through --target)")
    if uart_faults is not None and management != "uart":
        raise ConnectError("--uart-faults", "needs --management uart")
    if pcap_wire is not None and (target != "sim" or management != "etherbone" or isinstance(dut, RtlDut)):
        raise ConnectError("--pcap-wire", "needs --target sim with a --dut model and --management etherbone")
    status = on_status or (lambda text: None)
    with contextlib.ExitStack() as stack:
        notes = _hold(stack, target, command)
        control, state = None, None
        try:
            if target == "sim":
                transport, control, state = _start_simulation(stack, sim_dut_spec(dut, addresses), management,
                                                              uart_faults, status, progress, pcap_wire)
            else:
                transport = stack.enter_context(open_target(target))
        except ConnectError:
            raise
        except WirespeedError as exc:
            raise ConnectError("--target", str(exc)) from None
        tester = _open(transport, target,
                       describe_dut(dut, target, addresses) | _management_note(management, uart_faults),
                       control, requires)
        tester.notes = notes
        if target == "sim" and not isinstance(dut, RtlDut):     # an RTL DUT leaves the models idle
            from wirespeed.sim.control import DutControl

            tester.dut_probe = DutControl(control or transport).counts
            tester.dut_state_probe = state
        if check_identity:
            try:
                tester.connect()
            except WirespeedError as exc:
                raise ConnectError("--target", str(exc)) from None
        yield tester


def _hold(stack: contextlib.ExitStack, target: str, command: str | None) -> list[str]:
    """The board's lock, held until ``stack`` closes (none for a simulation: each run has its
    own); notes on a stale lock taken over."""
    from ..locks import Holder, LockBusy, tester_lock

    lock = tester_lock(target)
    if lock is None:
        return []
    try:
        stack.enter_context(lock.acquire(Holder.current(command=command)))
    except LockBusy as exc:
        raise ConnectError("--target", str(exc)) from None
    except OSError as exc:
        raise ConnectError("--target", f"cannot lock the tester ({lock.path}): {exc.strerror or exc}") from None
    return [f"{target}: took over the lock of {lock.stale.describe()}, which had ended"] if lock.stale else []


def _management_note(management: str, uart_faults: str | None) -> dict[str, str]:
    if management != "uart":
        return {}
    return {"tester_management": f"uart: {MANAGEMENT['uart']}"
                                 + (f"; faults on the line both ways: {uart_faults}" if uart_faults else "")}


def _open(transport: Transport, target: str, dut: dict[str, Any], control: Transport | None,
          requires: Sequence[tuple[str, str, str]]) -> Tester:
    from .maps import map_of
    try:
        rmap, config, word = map_of(transport)
    except WirespeedError as exc:
        raise ConnectError("--target", str(exc)) from None
    except ValueError as exc:
        raise ConnectError("--target", f"{transport.url}: {exc}") from None
    tester = Tester(transport, rmap, target=target, dut=dut, control=control, config=config, config_word=word)
    for field, block, why in requires:
        tester.require(block, field, why)
    return tester


def _start_simulation(stack: contextlib.ExitStack, spec: Any, management: str,
                      uart_faults: str | None, status: Callable[[str | None], None],
                      progress: Callable[..., None] | None, pcap_wire: Path | None = None
                      ) -> tuple[Transport, Transport | None, Callable[[], dict[str, Any]]]:
    try:
        from wirespeed.sim.launcher import SimProcess, UartFaults
    except ImportError as exc:
        raise ConnectError("--target", f"sim needs the wirespeed.sim package ({exc})") from None
    if management == "etherbone":
        status("starting the simulation (its first start builds it with Verilator)")
        try:
            wire = ["--pcap-wire", str(pcap_wire)] if pcap_wire is not None else []
            sim = stack.enter_context(_Simulation(SimProcess(spec, progress=progress, extra_args=wire)))
        finally:
            status(None)
        return stack.enter_context(EtherboneTransport(sim.host, sim.port)), None, sim.dut_state
    try:
        faults = UartFaults.both(uart_faults) if uart_faults else None
    except ValueError as exc:
        raise ConnectError("--uart-faults", str(exc)) from None
    try:
        process = SimProcess(spec, management="uart", faults=faults, progress=progress)
    except ValueError as exc:
        raise ConnectError("--management", str(exc)) from None
    status("starting the simulation reached over its UART (its first start builds it)")
    try:
        sim = stack.enter_context(_Simulation(process))
    finally:
        status(None)
    from ..transport.uart import SerialTransport
    # a 255-word burst takes about 0.9 s through the simulated line: a longer timeout than a board's
    transport = stack.enter_context(SerialTransport(sim.url, timeout=3.0, retries=8))
    control = stack.enter_context(EtherboneTransport(sim.host, sim.control_port))
    return transport, control, sim.dut_state


class _Simulation:
    """A SimProcess whose own start and stop failures (RuntimeError, several lines) become
    ConnectError: the first line as the message, the rest as detail."""

    def __init__(self, process: Any):
        self.process = process

    @staticmethod
    def _error(what: str, exc: Exception) -> ConnectError:
        first, _, rest = str(exc).partition("\n")
        return ConnectError("--target", f"sim: {what}: {first.rstrip(':')}", exit_code=1, detail=rest)

    def __enter__(self) -> Any:
        try:
            return self.process.__enter__()
        except (OSError, RuntimeError) as exc:
            raise self._error("did not start", exc) from None

    def __exit__(self, *exc_info: Any) -> Any:
        try:
            return self.process.__exit__(*exc_info)
        except RuntimeError as exc:
            raise self._error("failed", exc) from None

