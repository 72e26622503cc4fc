"""The ``wirespeed`` command.

Every bad input ends the program with one line on stderr,
``wirespeed: error: <field>: <what is allowed>``, and exit code 2; a run that fails after it
started measuring exits 1 the same way; Ctrl-C exits 130. Results measured so far are kept in
every case.
"""

from __future__ import annotations

import functools
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click import exceptions as click_exceptions
from typer.main import get_command

from .. import __version__
from . import configfile as config_files
from .common import InputError, err_console

__all__ = ["app", "main", "defaults_for"]

app = typer.Typer(add_completion=True, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="wirespeed: FPGA gigabit Ethernet RFC 2544 tester.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wirespeed {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                help="Show the version and exit.")] = False) -> None:
    """wirespeed: FPGA gigabit Ethernet RFC 2544 tester."""


def _usage_error_line(exc: click_exceptions.UsageError) -> str:
    """One line ``<field>: <message>`` for a command-line parsing error."""
    if isinstance(exc, click_exceptions.BadParameter) and exc.param is not None:
        field = exc.param.opts[0] if getattr(exc.param, "opts", None) else exc.param.name
        if isinstance(exc, click_exceptions.MissingParameter):
            return f"{field}: required"
        return f"{field}: {exc.message}"
    field = getattr(exc, "option_name", None) or "usage"
    return f"{field}: {exc.format_message()}"


def _show_warning(message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None) -> None:
    err_console.print(f"wirespeed: warning: {message}", highlight=False, soft_wrap=True)


@functools.lru_cache(maxsize=1)
def click_command() -> Any:
    """The command line as click builds it from the commands' annotations (once per process: it
    takes most of a bad input's time)."""
    return get_command(app)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    warnings.showwarning = _show_warning
    command = click_command()
    config_files.reset()    # errors about values from a --config file name the file and key (config_files.attribute)
    try:
        code = command.main(argv, prog_name="wirespeed", standalone_mode=False)
    except click_exceptions.NoArgsIsHelpError:
        return 2
    except click_exceptions.UsageError as exc:
        return _fail(config_files.attribute(_usage_error_line(exc)), 2)
    except InputError as exc:
        if exc.detail:
            print(exc.detail.rstrip("\n"), file=sys.stderr)
        return _fail(config_files.attribute(str(exc)), exc.exit_code)
    except typer.Abort:
        return _fail("interrupted", 130)
    return code if isinstance(code, int) else 0


def _fail(line: str, code: int) -> int:
    message = " ".join(line.split())
    print(f"wirespeed: error: {message}", file=sys.stderr)
    return code


def defaults_for(command_name: str, path: str | Path) -> dict[str, Any]:
    """The parameters a config file gives a ``wirespeed`` command, parsed and checked exactly as
    the equivalent flags would be: {parameter name: parsed value} (ConfigError, one line)."""
    command = click_command().commands[command_name]
    try:
        with command.make_context(command_name, [], parent=None, resilient_parsing=True) as ctx:
            _, defaults = config_files.read_mapping(path, command, ctx)
            return {name: next(p for p in command.params if p.name == name).process_value(ctx, value)
                    for name, value in defaults.items()}
    finally:
        config_files.reset()
