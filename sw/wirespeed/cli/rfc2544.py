"""``wirespeed rfc2544``: options into a :class:`~wirespeed.rfc2544.plan.Plan`, the plan run on the
tester, its events shown as they come (:mod:`.progress`).

The command's options are the run's common ones (below) and each registered test's own
(:mod:`wirespeed.rfc2544.registry`), shown in help panels by what they are for (each test's,
learning, simulation, output) so that the help reads at 80 columns; a config file and the web
form are parsed through the same options.
"""

from __future__ import annotations

import inspect
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import parse
from ..calibration import Calibration, CalibrationError
from ..host.tester import RtlDut, describe_dut, sim_dut_spec
from ..results.record import RunRecord
from ..results.resume import ResumeError, load_run, remaining_sizes
from ..rfc2544 import registry
from ..rfc2544.expect import metric_names, parse_expectation
from ..rfc2544.plan import Plan, PlanError, resolve_calibration
from ..run import Run, requires
from ..traffic import PortAddress, check_distinct
from . import configfile as config_files
from .app import app
from .common import (
    InputError,
    Spinner,
    as_input_error,
    config_option,
    dut_info_option,
    dut_option,
    open_tester,
    parser,
    rtl_dut,
    target_option,
    with_rules,
)
from .runexec import claim_folder, execute, exit_on_missed, interrupted, report_after_run

__all__ = ["rfc2544", "build_plan", "check_dut", "resume_parts", "check_gateware", "RESUME_ALLOWED"]

PCAP_WIRE_FILE = "wire.pcapng"
RESUME_ALLOWED = ("resume", "json_out", "target", "junit")     # options that may come with --resume
PANEL_LEARNING, PANEL_SIM, PANEL_OUTPUT = "Learning (RFC 2544 section 23)", "Simulation", "Output"
PANEL_VERDICTS = "Verdicts (for CI)"


def _panel_of(flag: str) -> str:
    """The help panel of a test's option, for a common option that belongs with it."""
    return next(test.panel(opt) for test in registry.all_tests() for opt in test.options if opt.flag == flag)


def _common(
    ctx: typer.Context,
    config_file: Annotated[Path | None, config_option()] = None,
    tests: Annotated[Any, typer.Option(parser=parser(lambda text: _tests(text)), metavar="LIST",
                                       help=f"Tests, run in RFC 2544 order: {registry.allowed()}.")] = "throughput",
    sizes: Annotated[Any, typer.Option(parser=parser(parse.size_points_list), metavar="LIST",
                                       help="Frame sizes in bytes (FCS included) and IMIX mixes (RFC 6985), "
                                            "e.g. 64,1518,imix:aaaaaaag.")
                     ] = "64,128,256,512,1024,1280,1518",
    target: Annotated[str, target_option()] = "sim",
    dut: Annotated[str | None, dut_option()] = None,
    out: Annotated[Path, typer.Option(metavar="DIR", help="Results folder.", rich_help_panel=PANEL_OUTPUT)
                   ] = Path("results"),
    trial_duration: Annotated[Any, typer.Option(parser=parser(parse.positive_duration), metavar="DURATION",
                                                help="Trial length (sim: 10ms, board: 60s).")] = None,
    wait: Annotated[Any, typer.Option(parser=parser(parse.duration), metavar="DURATION",
                                      help="Wait after each trial for frames in flight (sim: 1ms, board: 2s).")
                    ] = None,
    calibration: Annotated[str, typer.Option(
        metavar="auto|none|FILE", rich_help_panel=_panel_of("--latency-trials"),
        help="Tester delay subtracted from latency: a 'wirespeed calibrate' file; auto: sim a calibration run "
             "first, a board none; none: raw.")] = "auto",
    learning: Annotated[bool, typer.Option(
        "--learning/--no-learning", metavar="", rich_help_panel=PANEL_LEARNING,
        help="Before the first trial: addresses, ARP/ND, learning frames, --settle.")] = True,
    learning_frames: Annotated[int, typer.Option(min=0, max=1_000_000, metavar="N", rich_help_panel=PANEL_LEARNING,
                                                 help="Learning frames from each port to its peer.")] = 4,
    settle: Annotated[Any, typer.Option(parser=parser(parse.duration), metavar="DURATION",
                                        rich_help_panel=PANEL_LEARNING,
                                        help="Wait after the learning frames (sim: 1ms, board: 2s).")] = None,
    address: Annotated[list[str] | None, typer.Option(
        metavar="PORT:ADDRS", rich_help_panel=PANEL_LEARNING,
        help="A port's own mac=, ipv4=, ipv6=, e.g. 1:ipv4=198.19.0.9 (repeatable).")] = None,
    bidirectional: Annotated[bool, typer.Option(
        "--bidirectional", metavar="", help="Both ports send, each to the other; rates per direction (bursts "
                                            "stay one-way).")] = False,
    flows: Annotated[Any, typer.Option(
        parser=parser(parse.flows), metavar="SxD",
        help="Flows per direction: S source addresses each sending to D destinations, e.g. 100x20.")] = "1x1",
    ip_version: Annotated[Any, typer.Option(
        parser=parser(parse.ip_version), metavar="4|6",
        help="IP version of the test frames: 4, or 6 between the ports' IPv6 addresses (RFC 5180).")] = "4",
    json_out: Annotated[bool, typer.Option("--json", metavar="", rich_help_panel=PANEL_OUTPUT,
                                           help="Print results.json on stdout.")] = False,
    dut_rtl: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", rich_help_panel=PANEL_SIM,
        help="Your Verilog design as the DUT (docs/dut-rtl.md), instead of --dut; repeatable: every "
             "source.")] = None,
    dut_rtl_include: Annotated[list[Path] | None, typer.Option(
        metavar="DIR", rich_help_panel=PANEL_SIM, help="A folder of its `include files (repeatable).")] = None,
    dut_rtl_filelist: Annotated[list[Path] | None, typer.Option(
        metavar="FILE", rich_help_panel=PANEL_SIM,
        help="A Verilator file list (-f) of the design (repeatable; with or instead of --dut-rtl).")] = None,
    dut_rtl_top: Annotated[str | None, typer.Option(
        metavar="NAME", rich_help_panel=PANEL_SIM,
        help="The design's top module (default: the last one declared).")] = None,
    pcap_wire: Annotated[Path | None, typer.Option(
        metavar="DIR", rich_help_panel=PANEL_SIM,
        help="Write every frame on the four simulated wires (both ports, before and after the DUT) to "
             "DIR/wire.pcapng, with nanosecond timestamps and FCS (docs/linux-dut.md).")] = None,
    dut_rules: Annotated[Path | None, typer.Option(
        metavar="FILE", rich_help_panel=PANEL_SIM,
        help="An nftables ruleset loaded into --dut linux-router or linux-bridge (docs/linux-dut.md).")] = None,
    management: Annotated[Any, typer.Option(
        parser=parser(parse.choice("etherbone", "uart")), metavar="NAME", rich_help_panel=PANEL_SIM,
        help="How the host reaches the simulation: etherbone (fast) or uart (the boards' path, "
             "docs/management.md).")] = "etherbone",
    uart_faults: Annotated[Any, typer.Option(
        parser=parser(lambda text: _fault_rates(text)), metavar="RATES", rich_help_panel=PANEL_SIM,
        help="With --management uart: serial-line faults per frame, ppm: drop=N,dup=N,late=N,corrupt=N.")] = None,
    resume: Annotated[Path | None, typer.Option(
        metavar="DIR", rich_help_panel=PANEL_OUTPUT,
        help="Continue the interrupted or failed run in DIR, with its recorded parameters "
             "(docs/rfc2544.md).")] = None,
    expect: Annotated[list[str] | None, typer.Option(
        metavar="EXPR", rich_help_panel=PANEL_VERDICTS,
        help="A threshold, e.g. throughput_pct>=99@64 (@SIZES optional; repeatable; a miss exits 3). METRIC: "
             + ", ".join(name.split(" ")[0] for name in metric_names()) + ".")] = None,
    max_latency: Annotated[Any, typer.Option(
        parser=parser(parse.positive_duration), metavar="DURATION", rich_help_panel=PANEL_VERDICTS,
        help="As --expect latency_us<=DURATION.")] = None,
    max_loss: Annotated[Any, typer.Option(
        parser=parser(parse.loss_tolerance), metavar="PCT", rich_help_panel=PANEL_VERDICTS,
        help="As --expect loss_pct<=PCT.")] = None,
    junit: Annotated[Path | None, typer.Option(
        metavar="FILE", rich_help_panel=PANEL_VERDICTS,
        help="Also write the run as JUnit XML.")] = None,
    force: Annotated[bool, typer.Option(
        "--force", metavar="", rich_help_panel=PANEL_OUTPUT,
        help="Move an earlier run in --out aside, whole, to OUT.replaced-<time>, and start afresh.")] = False,
    title: Annotated[str | None, typer.Option(metavar="TEXT", rich_help_panel=PANEL_OUTPUT,
                                              help="The report's title.")] = None,
    operator: Annotated[str | None, typer.Option(metavar="NAME", rich_help_panel=PANEL_OUTPUT,
                                                 help="Who ran the test, for the report.")] = None,
    dut_info: Annotated[list[str] | None, typer.Option(
        metavar="KEY=VALUE", rich_help_panel=PANEL_OUTPUT,
        help="A DUT fact for the report: model=, serial=, firmware=... (repeatable).")] = None,
) -> None:
    """The run's common options (the template of the command's signature)."""


def _expectations(values: dict[str, Any]) -> list[str]:
    """--expect, --max-latency and --max-loss as expectation texts (InputError naming the option)."""
    texts = []
    for text in values["expect"] or []:
        try:
            texts.append(parse_expectation(text).text)
        except ValueError as exc:
            raise InputError("--expect", str(exc)) from None
    for flag, value, test, text in (
            ("--max-latency", values["max_latency"], "throughput", lambda v: f"latency_us<={v / 1000:g}"),
            ("--max-loss", values["max_loss"], "frame-loss", lambda v: f"loss_pct<={v:g}")):
        if value is None:
            continue
        if test not in values["tests"]:
            raise InputError(flag, f"checks a figure of the {test} test: add {test} to --tests")
        texts.append(text(value))
    return texts


def _fault_rates(text: str) -> str:
    from wirespeed.sim.launcher import parse_fault_rates

    return parse_fault_rates(text)


def _tests(text: str) -> list[str]:
    try:
        return Plan(tests=[t.strip() for t in text.split(",")]).tests
    except ValueError as exc:
        raise ValueError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None   # type: ignore[attr-defined]


def _test_parameters() -> list[inspect.Parameter]:
    """Each registered test's options as typer parameters, in a help panel per test."""
    params = []
    for test in registry.all_tests():
        for opt in test.options:
            kwargs: dict[str, Any] = {"metavar": opt.metavar, "help": opt.help, "rich_help_panel": test.panel(opt)}
            if opt.parse is not None:
                kind: Any = Any
                kwargs["parser"] = parser(opt.parse)
            else:
                kind = {"int": int | None, "float": float | None, "text": str | None}[opt.kind]
                if opt.min is not None:
                    kwargs["min"] = opt.min
                if opt.max is not None:
                    kwargs["max"] = opt.max
            annotation = Annotated[kind, typer.Option(opt.flag, **kwargs)]
            default: Any = opt.default if opt.parse is not None else (
                None if opt.default is None else {"int": int, "float": float}.get(opt.kind, str)(opt.default))
            params.append(inspect.Parameter(opt.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                            annotation=annotation))
    return params


def rfc2544(ctx: typer.Context, **values: Any) -> None:
    if values["resume"] is not None:
        return _resume_run(ctx, values["resume"], values["target"], values["json_out"], values["junit"])
    plan, dut, configs = build_plan(values)
    target = values["target"]
    calibration, cal_info = _calibration(plan, target, configs) if plan.calibration != "auto" else (None, None)
    check_dut(dut, target, plan.addresses)
    out = values["out"]
    cfg = ctx.meta.get(config_files.META_KEY)
    with claim_folder(out, force=values["force"]) as (claimed, notes):
        try:
            if plan.calibration == "auto":  # before the tester's simulation starts: it is a simulation of its own
                calibration, cal_info = _calibration(plan, target, configs)
            with open_tester(target, dut, management=values["management"], uart_faults=values["uart_faults"],
                             requires=requires(configs, plan.learning_config), print_notes=False,
                             pcap_wire=_pcap_wire(values["pcap_wire"]), addresses=plan.addresses) as tester:
                run = Run(plan, tester, out=out, calibration=calibration, calibration_info=cal_info, notes=notes,
                          config_file=cfg.record() if cfg else None, claimed=claimed)
                verdicts = execute(run, values["json_out"], values["junit"])
            if not values["json_out"]:    # --json (machine use): results files only; 'wirespeed report DIR' draws them
                report_after_run(out)
            exit_on_missed(verdicts)
        except KeyboardInterrupt:
            interrupted(out, notes)


def build_plan(values: dict[str, Any]) -> tuple[Plan, str | RtlDut | None, dict[str, Any]]:
    """The command's parsed options (``values``, by parameter name) as (the plan, the DUT, each
    test's configuration), checked as a run checks them before it starts (InputError naming the
    option; the DUT is checked by :func:`check_dut`); the web appliance builds its runs' plans here too."""
    target = values["target"]
    dut = rtl_dut(values["dut"], values["dut_rtl"] or [], values["dut_rtl_top"], target,
                  values["dut_rtl_include"] or [], values["dut_rtl_filelist"] or [])
    dut = with_rules(dut, values["dut_rules"])
    if values["management"] != "etherbone" and target != "sim":
        raise InputError("--management", "applies to --target sim only (a board is reached through --target)")
    if values["uart_faults"] is not None and values["management"] != "uart":
        raise InputError("--uart-faults", "needs --management uart")
    addresses = {}
    for text in values["address"] or []:
        try:
            port, value = parse.address(text)
        except ValueError as exc:
            raise InputError("--address", str(exc)) from None
        if port in addresses:
            raise InputError("--address", f"port {port} is given twice; give each port once (any of mac=, ipv4=, "
                                          "ipv6= in one --address)")
        addresses[port] = value
    try:
        check_distinct({p: addresses.get(p) or PortAddress.default(p) for p in (0, 1)})
    except ValueError as exc:
        raise InputError("--address", str(exc)) from None
    names = {opt.name for test in registry.all_tests() for opt in test.options}
    expect = _expectations(values)
    plan = Plan(tests=values["tests"], sizes=values["sizes"], trial_duration_ns=values["trial_duration"],
                wait_ns=values["wait"], learning=values["learning"], learning_frames=values["learning_frames"],
                settle_ns=values["settle"], addresses=addresses, bidirectional=values["bidirectional"],
                sources=values["flows"][0], destinations=values["flows"][1], ip_version=values["ip_version"],
                calibration=values["calibration"],
                options={name: values[name] for name in names}, target="sim" if target == "sim" else "board",
                expect=expect, title=values["title"], operator=values["operator"],
                dut_info=dut_info_option(values["dut_info"]))
    try:
        configs = plan.configs()
    except PlanError as exc:
        raise as_input_error(exc) from None
    return plan, dut, configs


def check_dut(dut: str | RtlDut | None, target: str, addresses: dict[int, PortAddress] | None = None) -> None:
    """InputError naming the option when the simulated DUT is missing or malformed, or cannot
    serve the plan's tester ``addresses`` (before any simulation starts)."""
    if target == "sim":
        _dut_spec(dut, addresses)


def _signature() -> inspect.Signature:
    """The command's parameters: the common ones of the main help panel, each test's, then the
    other common ones, a test's panel (--calibration) before learning, simulation and output
    (the help shows panels in the order of their first option)."""
    def panel(param: inspect.Parameter) -> str | None:
        info = next(iter(getattr(param.annotation, "__metadata__", ())), None)
        return getattr(info, "rich_help_panel", None)

    common = list(inspect.signature(_common, eval_str=True).parameters.values())
    order = (PANEL_LEARNING, PANEL_SIM, PANEL_OUTPUT)
    rest = sorted((p for p in common if panel(p) is not None),
                  key=lambda p: order.index(panel(p)) + 1 if panel(p) in order else 0)
    return inspect.Signature([p for p in common if panel(p) is None] + _test_parameters()
                             + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in rest])


rfc2544.__signature__ = _signature()       # type: ignore[attr-defined]
rfc2544.__annotations__ = {p.name: p.annotation for p in rfc2544.__signature__.parameters.values()}  # type: ignore[attr-defined]
rfc2544.__doc__ = ("RFC 2544 benchmarks against a simulated or real DUT: "
                   + registry.summary() + ".")
app.command(name="rfc2544")(rfc2544)


def _pcap_wire(folder: Path | None) -> Path | None:
    """``--pcap-wire DIR``: the pcapng file in ``DIR`` (made if missing)."""
    if folder is None:
        return None
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError("--pcap-wire", f"{folder}: {exc.strerror or exc}") from None
    return folder.resolve() / PCAP_WIRE_FILE


def _dut_spec(dut: str | RtlDut | None, addresses: dict[int, PortAddress] | None = None) -> Any:
    from ..host.tester import ConnectError

    try:
        return sim_dut_spec(dut, addresses)
    except ConnectError as exc:
        raise as_input_error(exc) from None


def _calibration(plan: Plan, target: str, configs: dict[str, Any]) -> tuple[Calibration | None, dict | None]:
    """The plan's calibration (--calibration): none, a file, or on sim an automatic calibration
    run (for the latency of 26.1/26.2 only), with a spinner while it runs."""
    from .. import sizes as size_points
    from ..host.tester import ConnectError

    if "throughput" not in configs and plan.calibration == "auto":
        return None, None
    first = next(iter(configs.values()))
    on_status = Spinner()
    try:
        return resolve_calibration(plan, target, size_points.distinct_sizes(first.frame_sizes), on_status)
    except (ConnectError, PlanError) as exc:
        raise as_input_error(exc) from None
    except CalibrationError as exc:
        field, _, message = str(exc).partition(": ")
        raise InputError(field, message, exit_code=1) from None
    finally:
        on_status(None)


# Resuming --------------------------------------------------------------------------------------------


def _resume_run(ctx: typer.Context, run_dir: Path, target: str, json_out: bool, junit: Path | None) -> None:
    """``rfc2544 --resume DIR``: the run recorded in DIR/results.json, continued with its own
    parameters; the sizes each test finished are kept, the others measured (a size left part way
    again from scratch, its earlier trials kept and marked superseded), after the learning
    phase again."""
    from typer._click.core import ParameterSource

    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name) if param.name else None
        if param.name not in RESUME_ALLOWED and source not in (None, ParameterSource.DEFAULT):
            flag = max(param.opts, key=len) if param.opts else param.name
            raise InputError("--resume", f"a resumed run keeps its recorded parameters: only --json and --target "
                                         f"(a board at a new address) may be given with it, not {flag}")
    if not run_dir.is_dir():        # load_run says why; the lock would create the folder
        return _resume_held(ctx, run_dir, target, json_out, junit, None)
    with claim_folder(run_dir, resume=True, field="--resume") as (claimed, _):
        return _resume_held(ctx, run_dir, target, json_out, junit, claimed)


def _resume_held(ctx: typer.Context, run_dir: Path, target: str, json_out: bool, junit: Path | None,
                 claimed: Any) -> None:
    """``_resume_run`` with the results folder held (``claimed``)."""
    from typer._click.core import ParameterSource

    try:
        record = load_run(run_dir)
    except ResumeError as exc:
        raise InputError("--resume", str(exc)) from None
    if ctx.get_parameter_source("target") in (None, ParameterSource.DEFAULT):
        target = record.target
    elif target != record.target and "sim" in (target, record.target):
        raise InputError("--target", f"the run was on {record.target}: resume it there (only a board's address "
                                     "may change)")
    dut, calibration, note, left = resume_parts(record, run_dir, target)
    try:
        if not any(left.values()):              # everything was measured: only the status was left
            verdicts = execute(Run.resume(record, None, run_dir, note=note, claimed=claimed), json_out, junit)
        else:
            todo = {name: record.parameters_of(name) for name, sizes in left.items() if sizes}
            with open_tester(target, dut, requires=requires(todo, record.learning_parameters),
                             addresses=record.planned_addresses()) as tester:
                check_gateware(tester, record)
                if tester.target != record.target:
                    note += f"; target {tester.target} (was {record.target})"
                    record.target = tester.target
                verdicts = execute(Run.resume(record, tester, run_dir, calibration=calibration, note=note,
                                               claimed=claimed), json_out, junit)
        if not json_out:
            report_after_run(run_dir)
        exit_on_missed(verdicts)
    except KeyboardInterrupt:
        interrupted(run_dir)


def resume_parts(record: RunRecord, run_dir: Path,
                 target: str) -> tuple[Any, Calibration | None, str, dict[str, list[Any]]]:
    """What resuming the run ``record`` of ``run_dir`` on ``target`` needs: (the DUT that starts
    its simulation again, its recorded calibration, the note the record gets, each test's sizes
    left); InputError naming --resume when the run cannot go on."""
    dut = _recorded_dut(record) if target == "sim" else record.dut.get("description")
    calibration = None
    if record.calibration is not None and record.calibration.get("file") is not None:
        try:
            calibration = Calibration.model_validate(record.calibration["file"])
        except ValueError:
            raise InputError("--resume", f"{run_dir / 'results.json'}: its calibration is not readable") from None
    left = {e.name: remaining_sizes(record, e.name) for e in record.tests}
    kept = sum(len(e.parameters.frame_sizes) - len(left[e.name]) for e in record.tests
               if not registry.get(e.name).one_result)
    kept += sum(1 for e in record.tests if registry.get(e.name).one_result and not left[e.name])
    learning = record.learning_parameters is not None
    note = (f"resumed {datetime.now(UTC).isoformat(timespec='seconds')} (the run was {record.status}): "
            f"{kept} finished test/frame size results kept, {sum(map(len, left.values()))} measured"
            f"{' after the learning phase again (the DUT may have restarted)' if learning else ''}; trials of "
            f"a frame size left part way are kept, marked superseded, and that size measured again from scratch")
    return dut, calibration, note, left


def check_gateware(tester: Any, record: RunRecord) -> None:
    """InputError naming --target when the connected tester's gateware is not the run's."""
    assert tester.ident is not None     # connecting identified the tester
    if tester.ident != record.gateware:
        raise InputError("--target", f"the tester's gateware ({tester.ident.version_text}, map hash "
                                     f"{tester.ident.map_hash:#010x}) is not the run's "
                                     f"({record.gateware.version_text}, {record.gateware.map_hash:#010x})")


def _recorded_dut(record: RunRecord) -> str | RtlDut:
    """The DUT that starts the run's simulation again (InputError if it cannot, or the DUT it
    gives is not the recorded one, e.g. a --dut-rtl file that changed)."""
    from ..host.tester import ConnectError

    recorded = record.dut
    dut: str | RtlDut | None
    if recorded.get("model") == "rtl":
        dut = RtlDut.recorded(recorded)
        if "files" not in recorded:     # a run from before multi-file designs: one file, its own bytes
            return _recorded_single_file_dut(recorded, dut)
    else:
        dut = (recorded.get("profile") or {}).get("given") or recorded.get("spec")
    if not dut:
        raise InputError("--resume", "the run's simulated DUT is not recorded (no dut.spec)")
    try:
        described = describe_dut(dut, "sim", record.planned_addresses())
    except ConnectError as exc:
        raise InputError("--resume", f"the run's simulated DUT cannot be started again ({exc})") from None
    if described != recorded:
        raise InputError("--resume", f"the run's simulated DUT {recorded.get('spec')!r} is not what it gives now "
                                     "(the DUT model or the --dut-rtl file changed?)")
    return dut


def _recorded_single_file_dut(recorded: dict[str, Any], dut: RtlDut) -> RtlDut:
    import hashlib

    path = Path(str(recorded.get("path")))
    try:
        same = hashlib.sha256(path.read_bytes()).hexdigest() == recorded.get("sha256")
    except OSError:
        same = False
    if not same:
        raise InputError("--resume", f"the run's --dut-rtl file {path} is missing or changed since the run")
    _dut_spec(dut)
    return dut
