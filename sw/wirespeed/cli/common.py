"""What the commands share: the one-line error, option parsers that speak typer, the --config,
--target and --dut options, and connecting to the tester."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from .. import parse
from ..host.tester import DUT_EXAMPLE, ConnectError, RtlDut, Tester, connect
from ..rfc2544.plan import PlanError
from . import configfile as config_files

__all__ = ["InputError", "err_console", "parser", "config_option", "target_option", "dut_option", "open_tester",
           "DUT_EXAMPLE", "rtl_dut", "as_input_error"]

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
                        help="Option values from a TOML or YAML file (keys: the long option names); options "
                             "given here override it (docs/config.md).")


def target_option() -> Any:
    return typer.Option(parser=parser(parse.target), metavar="sim|udp://HOST[:PORT]|serial://DEV",
                        help="The Verilator simulation, or a board: Etherbone over UDP or over a serial line "
                             "(docs/management.md).")


def dut_option(help_text: str | None = None) -> Any:
    return typer.Option(help=help_text or f"Simulated DUT (e.g. '{DUT_EXAMPLE}'), or a description of a real one.")


def rtl_dut(dut: str | None, dut_rtl: Path | None, dut_rtl_top: str | None, target: str) -> str | RtlDut | None:
    """``--dut-rtl FILE [--dut-rtl-top NAME]`` as the DUT of a simulation, else ``dut``."""
    if dut_rtl is None:
        if dut_rtl_top is not None:
            raise InputError("--dut-rtl-top", "needs --dut-rtl FILE")
        return dut
    if dut is not None:
        raise InputError("--dut-rtl", "give --dut or --dut-rtl, not both")
    if target != "sim":
        raise InputError("--dut-rtl", "needs --target sim (the module is simulated with the tester)")
    return RtlDut(dut_rtl, dut_rtl_top)


@contextlib.contextmanager
def open_tester(target: str, dut: str | RtlDut | None = None, *, management: str = "etherbone",
                uart_faults: str | None = None, requires: Sequence[tuple[str, str, str]] = ()) -> Iterator[Tester]:
    """:func:`wirespeed.connect` with a spinner on stderr while a simulation starts, and every
    failure as an InputError."""
    status = None

    def on_status(text: str | None) -> None:
        nonlocal status
        if status is not None:
            status.stop()
            status = None
        if text is not None:
            status = err_console.status(text)
            status.start()

    try:
        with connect(target, dut, management=management, uart_faults=uart_faults, requires=requires,
                     on_status=on_status) as tester:
            yield tester
    except ConnectError as exc:
        raise as_input_error(exc) from None
    finally:
        on_status(None)
