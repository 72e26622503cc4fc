"""A run's plan from a config mapping (a config file's values, e.g. a profile of the web
appliance), read exactly as ``wirespeed rfc2544 --config FILE`` reads it: every value through
its flag's parser and the command's checks, so a bad value is refused with the command line's
own words. The errors name the key (``resolution``, ``rfc2544.sizes``), not the flag."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from typer._click import exceptions as click_exceptions

from ..rfc2544.plan import Plan
from . import configfile as config_files
from .app import _usage_error_line, click_command
from .common import InputError
from .rfc2544 import build_plan, check_dut

__all__ = ["PlanInput", "PlanRefused", "plan_from_mapping", "config_keys"]

COMMAND = "rfc2544"


class PlanRefused(config_files.ConfigError):
    """A mapping that is not a runnable plan: ``field`` (the key at fault) and ``message`` (what
    is allowed), as the command line's one-line error words them."""


@dataclass(frozen=True)
class PlanInput:
    """A checked plan: the plan, its DUT, each test's configuration and every option's value."""

    plan: Plan
    dut: Any
    configs: dict[str, Any]
    values: dict[str, Any]


def config_keys() -> dict[str, Any]:
    """The keys a config mapping may hold (long option names without dashes) -> click parameter."""
    return config_files.option_keys(click_command().commands[COMMAND])


def plan_from_mapping(data: Mapping[str, Any], *, name: str = "profile",
                      defaults: Mapping[str, Any] | None = None,
                      check: Callable[[dict[str, Any]], None] | None = None) -> PlanInput:
    """``data`` (a config file's mapping; ``name`` what its errors would be prefixed with) as a
    checked plan; ``defaults``: parameter values the mapping does not give (parameter name ->
    the flag's text), e.g. a server's target and DUT; ``check(values)``: more checks of the parsed
    values before the plan is made (raising PlanRefused). PlanRefused names the key at fault."""
    command = click_command().commands[COMMAND]
    try:
        with command.make_context(COMMAND, [], resilient_parsing=True) as probe:
            given = config_files.to_defaults(name, data, command, probe)
        ctx = command.make_context(COMMAND, [], default_map={**(defaults or {}), **given})
    except config_files.ConfigError as exc:
        raise PlanRefused(exc.field.removeprefix(f"{name}: "), exc.message) from None
    except click_exceptions.UsageError as exc:
        raise _refused(_usage_error_line(exc)) from None
    values = dict(ctx.params)
    if check is not None:
        check(values)
    try:
        plan, dut, configs = build_plan(values)
        check_dut(dut, values["target"], plan.addresses)
    except InputError as exc:
        raise _refused(str(exc)) from None
    return PlanInput(plan, dut, configs, values)


def _refused(line: str) -> PlanRefused:
    field, _, message = line.partition(": ")
    return PlanRefused(field.lstrip("-"), message)


def mapping_of_text(text: str, fmt: str, name: str = "profile") -> dict[str, Any]:
    """A config file's text (``fmt``: ``toml`` or ``yaml``) as its mapping, parsed as ``--config``
    parses a file (PlanRefused, field ``text``, when it is not valid)."""
    suffix = f".{fmt.lower()}"
    if suffix not in config_files.FORMATS:
        raise PlanRefused("format", f"toml or yaml; not {fmt!r}")
    parse = config_files._parse_toml if config_files.FORMATS[suffix] == "TOML" else config_files._parse_yaml
    try:
        return parse(name, text)
    except config_files.ConfigError as exc:
        raise PlanRefused("text", exc.message) from None
