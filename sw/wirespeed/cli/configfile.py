"""Config files for the ``wirespeed`` commands (``--config FILE``): TOML or YAML, one key per long
option of the command, equivalent to the flags (docs/config.md).

A file becomes the command's parameter defaults (click's ``default_map``): options given on the
command line override it, and every value goes through the same parser as its flag, so a value
refused in the file gets the flag's own message, prefixed by the file and the key::

    run.toml: resolution: a percentage of line rate in (0, 100], e.g. 0.1; not '0'

Layout: keys at the top level apply to every command that reads the file; a table named after a
command (``[rfc2544]``, ``[calibrate]``, ``[capture]``; a mapping ``rfc2544:`` in YAML) applies to
that command only and overrides the top level. Keys take dashes or underscores
(``trial-duration`` / ``trial_duration``).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer._click import exceptions as click_exceptions

__all__ = ["SECTIONS", "ConfigError", "ConfigFile", "load", "read_mapping", "option_keys", "to_defaults",
           "attribute", "reset", "META_KEY"]

# the commands that take --config: their tables in a shared file
SECTIONS = ("rfc2544", "calibrate", "capture")
FORMATS = {".toml": "TOML", ".yaml": "YAML", ".yml": "YAML"}
# where the loaded file is kept on the click context (ctx.meta) for the run's self-description
META_KEY = "wirespeed.config"
LIST_METAVAR = "LIST"
NOT_IN_FILE = {"config", "help"}


class ConfigError(Exception):
    """One line ``<field>: <message>``; field is the file, or ``FILE: KEY``."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


@dataclass(frozen=True)
class ConfigFile:
    """A config file as read: for the run's header (path, format, hash and text)."""

    path: str
    format: str
    text: str
    data: dict[str, Any]

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()

    def record(self) -> dict[str, str]:
        """What a results file records of the config file."""
        return {"path": self.path, "format": self.format, "sha256": self.sha256, "text": self.text}


# Reading -------------------------------------------------------------------------------------------------


def load(path: str | Path) -> ConfigFile:
    """Read and parse a TOML (.toml) or YAML (.yaml/.yml) file into a mapping (ConfigError if it
    cannot be read, is malformed or is not a mapping at the top)."""
    name = str(path)
    fmt = FORMATS.get(Path(name).suffix.lower())
    if fmt is None:
        raise ConfigError("--config", f"a .toml, .yaml or .yml file; not {name!r}")
    try:
        raw = Path(name).read_bytes()
    except OSError as exc:
        raise ConfigError("--config", f"cannot read {name}: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(name, f"not UTF-8 text (byte {exc.start})") from None
    data = _parse_toml(name, text) if fmt == "TOML" else _parse_yaml(name, text)
    return ConfigFile(path=name, format=fmt, text=text, data=data)


def _parse_toml(name: str, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        where = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if where:
            message, line, column = message[:where.start()], where[1], where[2]
        else:               # "(at end of document)"
            message = re.sub(r"\s*\(at end of document\)$", " at the end of the file", message)
            line, column = text.count("\n") + (not text.endswith("\n")), None
        at = f"line {line}, column {column}" if column else f"line {line}"
        raise ConfigError(name, f"{at}: not valid TOML: {message}") from None


def _yaml_loader():
    import yaml

    class Loader(yaml.SafeLoader):
        """Safe loading; a key given twice in a mapping is an error (PyYAML keeps the last)."""

        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                except TypeError:   # an unhashable key: the base class reports it
                    break
                if duplicate:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return yaml, Loader


def _parse_yaml(name: str, text: str) -> dict[str, Any]:
    yaml, loader = _yaml_loader()
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        context = getattr(exc, "context", None)
        what = f"{context}: {problem}" if context and problem != context else problem
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise ConfigError(name, f"{where}not valid YAML: {' '.join(str(what).split())}") from None
    if data is None:        # an empty file
        return {}
    if not isinstance(data, dict):
        raise ConfigError(name, f"a mapping of option names to values at the top; not {_kind(data)}")
    return data


# Keys and values -----------------------------------------------------------------------------------------


def option_keys(command) -> dict[str, Any]:
    """The keys a file may hold for a click command: its long option names without the dashes
    (``trial-duration``), each to its click parameter; --config and --help excluded."""
    keys = {}
    for param in command.params:
        if getattr(param, "param_type_name", "") != "option":
            continue
        for opt in param.opts:
            if opt.startswith("--") and opt[2:] not in NOT_IN_FILE:
                keys[opt[2:]] = param
    return keys


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the text {value!r}"
    return f"a {type(value).__name__}"


def _scalar_text(value: Any) -> str | None:
    """A TOML/YAML scalar as the text a flag would take (None: not a scalar)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    return None


def _as_flag_value(param, key: str, value: Any) -> Any:
    """A file value as the value the option's parser takes (ConfigError: wrong type)."""
    flag = f"--{key}"
    metavar = f" {param.metavar}" if param.metavar else ""
    if getattr(param, "is_flag", False):
        if isinstance(value, bool):
            return value
        negative = f" / {param.secondary_opts[0]}" if param.secondary_opts else ""
        raise ValueError(f"true or false (as {flag}{negative}); not {_kind(value)}")
    if param.multiple:
        items = value if isinstance(value, list) else [value]
        texts = [_scalar_text(item) for item in items]
        if any(t is None for t in texts):
            bad = next(item for item, t in zip(items, texts) if t is None)
            raise ValueError(f"text, or a list of texts each as one {flag}{metavar}; not {_kind(bad)}")
        return texts
    if param.metavar == LIST_METAVAR and isinstance(value, list):
        texts = [_scalar_text(item) for item in value]
        good = [t for t in texts if t is not None]
        if not texts or len(good) < len(texts):
            bad = next((item for item, t in zip(value, texts) if t is None), None)
            raise ValueError(f"a list of values or comma-separated text (as {flag} {LIST_METAVAR}); not "
                             + ("an empty list" if not texts else f"a list holding {_kind(bad)}"))
        return ",".join(good)
    text = _scalar_text(value)
    if text is None:
        lists = " (or a list)" if param.metavar == LIST_METAVAR else ""
        raise ValueError(f"one value{lists} as {flag}{metavar} takes; not {_kind(value)}")
    return text


def _check(ctx, param, value: Any) -> None:
    """Run ``value`` through the option's own parser and checks, as if given as the flag."""
    try:
        param.process_value(ctx, value)
    except click_exceptions.BadParameter as exc:
        raise ValueError(exc.message) from None
    except click_exceptions.UsageError as exc:
        raise ValueError(exc.format_message()) from None


def _section_items(cfg_name: str, data: Mapping[str, Any], command_name: str):
    """(key as written, dotted name for messages, value): the top level, then the command's table."""
    items = []
    for key, value in data.items():
        if not isinstance(key, str):
            raise ConfigError(f"{cfg_name}: {key!r}", "option names are text")
        if key in SECTIONS:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{cfg_name}: {key}", f"a table of the '{key}' command's options; not "
                                                        f"{_kind(value)}")
            continue
        items.append((key, key, value))
    section = data.get(command_name)
    for key, value in (section or {}).items():
        if not isinstance(key, str):
            raise ConfigError(f"{cfg_name}: {command_name}.{key!r}", "option names are text")
        items.append((key, f"{command_name}.{key}", value))
    return items


def to_defaults(cfg_name: str, data: Mapping[str, Any], command, ctx=None,
                origins: dict[str, str] | None = None) -> dict[str, Any]:
    """A parsed config mapping as a click ``default_map`` for ``command`` (parameter name -> the
    text/list/bool the flag would get). With ``ctx``, each value is also run through the
    option's parser so a bad value is reported against the file and key (ConfigError).
    ``origins`` (if given) gets parameter name -> the key as written (``rfc2544.trial_duration``)."""
    keys = option_keys(command)
    command_name = command.name
    defaults: dict[str, Any] = {}
    given: dict[str, tuple[str, str]] = {}      # param name -> (scope, dotted key) of the value kept
    for key, dotted, value in _section_items(cfg_name, data, command_name):
        field = f"{cfg_name}: {dotted}"
        normal = key.replace("_", "-")
        if normal == "config":
            raise ConfigError(field, "not in a config file (one file per run; no nesting)")
        param = keys.get(normal)
        if param is None:
            if normal in SECTIONS:
                raise ConfigError(field, f"a table of the '{normal}' command goes at the top level")
            close = difflib.get_close_matches(normal, keys, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(field, f"not an option of '{command_name}'; {hint}the keys are its long options "
                                     f"(see wirespeed {command_name} --help)")
        scope = dotted.rpartition(".")[0]
        if param.name in given and given[param.name][0] == scope:
            raise ConfigError(field, f"given twice (also as {given[param.name][1]!r})")
        try:
            flag_value = _as_flag_value(param, normal, value)
            if ctx is not None:
                _check(ctx, param, flag_value)
        except ValueError as exc:
            raise ConfigError(field, str(exc)) from None
        given[param.name] = (scope, dotted)
        defaults[param.name] = flag_value
    if origins is not None:
        origins.update({name: dotted for name, (_, dotted) in given.items()})
    return defaults


def read_mapping(path: str | Path, command, ctx=None) -> tuple[ConfigFile, dict[str, Any]]:
    """Read a config file and turn it into ``command``'s default_map (see :func:`to_defaults`).
    With ``ctx``, the file is remembered for :func:`attribute` until :func:`reset`."""
    cfg = load(path)
    origins: dict[str, str] = {}
    defaults = to_defaults(cfg.path, cfg.data, command, ctx, origins)
    if ctx is not None:
        flags = {opt: name for name in origins for p in command.params if p.name == name
                 for opt in (*p.opts, *p.secondary_opts)}
        _active[:] = [(cfg.path, origins, flags, ctx)]
    return cfg, defaults


# Errors found later, while the command runs ---------------------------------------------------------------

_active: list = []      # (file, {parameter: key as written}, {flag: parameter}, click context) of this run


def reset() -> None:
    """Forget the file of an earlier command (each ``main()`` call starts with this)."""
    _active.clear()


def attribute(line: str) -> str:
    """An error line ``--flag: message`` about a value that came from the config file (the command
    found it wrong after parsing, e.g. a --dut the simulation refuses) as ``FILE: key: message``."""
    if not _active:
        return line
    from typer._click.core import ParameterSource

    path, origins, flags, ctx = _active[0]
    field, sep, message = line.partition(": ")
    name = flags.get(field)
    if not sep or name is None or ctx.get_parameter_source(name) != ParameterSource.DEFAULT_MAP:
        return line
    return f"{path}: {origins[name]}: {message}"
