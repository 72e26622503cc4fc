"""What the commands share: the one-line error, option parsers that speak typer, the --config,
--target and --dut options, and connecting to the tester."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from .. import parse
from ..host.tester import DUT_EXAMPLE, ConnectError, RtlDut, Tester, connect
from ..progress import build_progress
from ..rfc2544.plan import PlanError
from . import configfile as config_files

__all__ = ["InputError", "err_console", "parser", "dut_info_option", "config_option", "target_option", "dut_option",
           "open_tester",
           "DUT_EXAMPLE", "rtl_dut", "as_input_error", "Spinner"]

err_console = Console(stderr=True)


class InputError(Exception):
    """Reported as one line ``<field>: <message>`` (after any ``detail`` lines) with
    ``exit_code``: 2 for bad input, 1 for a failure once running."""

    def __init__(self, field: str, message: str, exit_code: int = 2, detail: str = ""):
        super().__init__(f"{field}: {message}")
        self.exit_code, self.detail = exit_code, detail


def as_input_error(exc: ConnectError | PlanError) -> InputError:
    return InputError(exc.field, exc.message, getattr(exc, "exit_code", 2), getattr(exc, "detail", ""))


def parser(parse_text: Callable[[str], Any]) -> Callable[[str], Any]:
    """A typer option parser from a :mod:`wirespeed.parse` parser (ValueError -> BadParameter)."""
    def typer_parser(text: str) -> Any:
        if not isinstance(text, str):      # a default given as a value
            return text
        try:
            return parse_text(text)
        except ValueError as exc:
            raise typer.BadParameter(str(exc).splitlines()[0]) from None
    return typer_parser


def dut_info_option(texts: list[str] | None) -> dict[str, str]:
    """Every ``--dut-info KEY=VALUE`` as a mapping (InputError naming the option)."""
    try:
        return parse.dut_info_list(texts or [])
    except ValueError as exc:
        raise InputError("--dut-info", str(exc)) from None


def _config_file(ctx: typer.Context, value: Path | None) -> None:
    """--config FILE (eager, so before the other options): the file's values become the command's
    defaults, each checked by its option's parser; options on the command line override them."""
    if value is None:
        return
    try:
        cfg, defaults = config_files.read_mapping(value, ctx.command, ctx)
    except config_files.ConfigError as exc:
        raise InputError(exc.field, exc.message) from None
    ctx.default_map = {**(ctx.default_map or {}), **defaults}
    ctx.meta[config_files.META_KEY] = cfg     # config.ConfigFile: path, format, text, sha256 for the results


def config_option() -> Any:
    return typer.Option("--config", metavar="FILE", callback=_config_file, is_eager=True,
                        help="Option values from a TOML or YAML file, keyed by long option name; options given "
                             "here override it (docs/config.md).")


def target_option() -> Any:
    return typer.Option(parser=parser(parse.target), metavar="TARGET",
                        help="sim (the Verilator simulation), or a board: udp://HOST[:PORT] or serial://DEV "
                             "(docs/management.md).")


def dut_option(help_text: str | None = None) -> Any:
    return typer.Option(help=help_text or "Simulated DUT, MODEL[:KEY=VALUE,...], e.g. router:rate=400k "
                        "(wirespeed dut-models lists them), or a description of a real one.")


def rtl_dut(dut: str | None, dut_rtl: Sequence[Path], dut_rtl_top: str | None, target: str,
            include: Sequence[Path] = (), filelists: Sequence[Path] = ()) -> str | RtlDut | None:
    """``--dut-rtl FILE... [--dut-rtl-include DIR...] [--dut-rtl-filelist FILE...]
    [--dut-rtl-top NAME]`` as the DUT of a simulation, else ``dut``."""
    if not dut_rtl and not filelists:
        for flag, given in (("--dut-rtl-top", dut_rtl_top is not None), ("--dut-rtl-include", bool(include))):
            if given:
                raise InputError(flag, "needs --dut-rtl FILE (or --dut-rtl-filelist FILE)")
        return dut
    flag = "--dut-rtl" if dut_rtl else "--dut-rtl-filelist"
    if dut is not None:
        raise InputError(flag, "give --dut or --dut-rtl, not both")
    if target != "sim":
        raise InputError(flag, "needs --target sim (the module is simulated with the tester)")
    return RtlDut(dut_rtl, include_dirs=include, file_lists=filelists, top=dut_rtl_top)


def with_rules(dut: str | RtlDut | None, rules: Path | None) -> str | RtlDut | None:
    """``--dut-rules FILE``: ``dut`` (a Linux DUT) with the ruleset as its ``rules`` parameter."""
    if rules is None:
        return dut
    try:
        from wirespeed.sim.dut_linux import LINUX_MODELS
    except ImportError as exc:
        raise InputError("--dut-rules", f"needs the wirespeed.sim package ({exc})") from None
    ruled = [name for name, cls in LINUX_MODELS.items() if "rules" in cls.PARAMS]
    name, _, params = dut.strip().partition(":") if isinstance(dut, str) else ("", "", "")
    if name.strip() not in ruled:
        raise InputError("--dut-rules", f"needs --dut {' or '.join(ruled)}")
    path = rules.expanduser().resolve()
    if not path.is_file() or not os.access(path, os.R_OK):
        raise InputError("--dut-rules", f"{rules}: not a readable file")
    if "," in str(path):
        raise InputError("--dut-rules", f"{rules}: a path without commas")
    return f"{name.strip()}:{params.strip() + ',' if params.strip() else ''}rules={path}"


class Spinner:
    """A spinner on stderr for slow steps (``spinner(text)``; None ends it), and the stages of a
    simulation build beside it (``spinner.progress``: on a terminal in its text, elsewhere as
    plain lines; :func:`wirespeed.progress.build_progress`)."""

    def __init__(self) -> None:
        self.status: Any = None
        self.what = ""

    def __call__(self, text: str | None) -> None:
        if self.status is not None:
            self.status.stop()
            self.status = None
        if text is not None:
            self.what = text
            self.status = err_console.status(text)
            self.status.start()

    def progress(self, text: str, *, note: bool = False) -> None:
        build_progress(err_console, self.status, self.what)(text, note=note)


@contextlib.contextmanager
def open_tester(target: str, dut: str | RtlDut | None = None, *, management: str = "etherbone",
                uart_faults: str | None = None, requires: Sequence[tuple[str, str, str]] = (),
                print_notes: bool = True, pcap_wire: Path | None = None,
                addresses: Mapping[int, Any] | None = None) -> Iterator[Tester]:
    """:func:`wirespeed.connect` with a spinner on stderr while a simulation starts (and builds),
    every failure as an InputError; ``print_notes``: show the tester's notes (a stale lock taken
    over) at once (else they go into the results)."""
    spinner = Spinner()
    try:
        with connect(target, dut, management=management, uart_faults=uart_faults, requires=requires,
                     on_status=spinner, progress=spinner.progress, command=" ".join(sys.argv),
                     pcap_wire=pcap_wire, addresses=addresses) as tester:
            spinner(None)
            if print_notes:
                for line in tester.notes:
                    err_console.print(f"wirespeed: note: {line}", highlight=False, soft_wrap=True)
            yield tester
    except ConnectError as exc:
        raise as_input_error(exc) from None
    finally:
        spinner(None)
