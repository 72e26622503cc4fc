"""The RFC 2544 tests wirespeed knows, each registered once with everything the rest of the
program needs of it.

A test is one module of :mod:`wirespeed.rfc2544.suite` that calls :func:`register` with a
:class:`TestType`: its name and RFC section, its options (the command line, config files and
the web form all read them), how the plan's values make its configuration, its procedure, its
result model, its CSV tables and its console summary. The command line, the results record,
``--resume`` and the report iterate :func:`all_tests`; nothing else lists the tests, so adding
one is adding a module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from .common import PortPairConfig
    from .context import RunContext
    from .estimate import DutHint, SizeEstimate
    from .plan import Plan

__all__ = ["Option", "Metric", "Table", "TestType", "register", "all_tests", "get", "names", "resolve_name",
           "allowed", "summary"]


@dataclass(frozen=True)
class Option:
    """One option of a test, as the command line shows it and every face parses it.

    ``flag`` is the long option (``--b2b-trials``); ``name`` the value's key in the plan's
    options (``b2b_trials``). ``parse`` turns the text a user typed into the value or raises
    ValueError with what is allowed (the one-line error's message); without it the value is
    an int (``min``/``max`` inclusive) or a float of ``kind``. ``default`` is the text default
    shown in help (None: the target decides, ``target_defaults`` by target kind). ``panel``: the
    help panel it is shown in (None: its test's)."""

    flag: str
    help: str
    metavar: str | None = None
    kind: str = "int"               # int, float, text, or parsed (parse given)
    parse: Callable[[str], Any] | None = None
    default: str | None = None
    min: int | None = None
    max: int | None = None
    target_defaults: Mapping[str, Any] = field(default_factory=dict)
    panel: str | None = None

    @property
    def name(self) -> str:
        return self.flag.removeprefix("--").replace("-", "_")

    def value(self, given: Any) -> Any:
        """The option's value from what a face gives: text as a user types it (parsed), or a
        value of its kind (an int or float within ``min``..``max``). ValueError: what is allowed."""
        if isinstance(given, str) and self.kind != "text":
            if self.parse is not None:
                return self.parse(given)
            try:
                given = {"int": int, "float": float}[self.kind](given)
            except ValueError:
                raise ValueError(f"{'an integer' if self.kind == 'int' else 'a number'}, not {given!r}") from None
        if self.kind in ("int", "float"):
            if isinstance(given, bool) or not isinstance(given, int if self.kind == "int" else (int, float)):
                raise ValueError(f"{'an integer' if self.kind == 'int' else 'a number'}, not {given!r}")
            if self.min is not None and given < self.min:
                raise ValueError(f"at least {self.min}, not {given}")
            if self.max is not None and given > self.max:
                raise ValueError(f"at most {self.max}, not {given}")
        return given


@dataclass(frozen=True)
class Metric:
    """A figure of one frame size's result that an expectation may set a threshold on
    (:mod:`wirespeed.rfc2544.expect`): its name, unit and meaning, and how to read it from a
    result (None: the result does not have it)."""

    name: str
    unit: str
    help: str
    value: Callable[[Any], float | None]


@dataclass(frozen=True)
class Table:
    """A summary table for people: a title, column names and rows of text."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[str]]


@dataclass(frozen=True)
class TestType:
    """Everything about one RFC 2544 test (see the module doc).

    ``configure(plan, options)`` makes the test's configuration model from the plan (sizes,
    durations, traffic, learning) and the parsed values of its own options, or raises
    :class:`~wirespeed.rfc2544.plan.PlanError`; ``run(ctx, config)`` measures every frame size of
    the configuration through the run context and returns the results (one per frame size,
    ``result``); ``tables(results, record)`` gives its CSV files (name -> (columns, text); ``files``: the names
    it may write);
    ``summary(results, record)`` the console tables. ``metrics``: the figures an expectation may
    name (``--expect``). ``needs``: tests whose results it uses, each
    with why (their results reach it through the context), ``blocks``: optional gateware blocks it needs
    (a :class:`~wirespeed.gateware.config.TesterConfig` attribute -> why). ``aliases``: other names
    users type for it (``--tests``; any name matches with ``_`` for ``-``, in any case);
    ``includes``: what else it measures, as (section, what) (the command's summary). ``estimate(config,
    dut)``: per frame size, the trials the procedure is expected to run against the DUT
    ``dut`` and their time on the wire (:mod:`wirespeed.rfc2544.estimate`; None: no estimate)."""

    name: str
    section: str
    title: str
    order: int
    config: type[PortPairConfig]
    result: type[BaseModel]
    configure: Callable[[Plan, Mapping[str, Any]], PortPairConfig]
    run: Callable[[RunContext, Any], list[Any]]
    tables: Callable[[Sequence[Any], Any], dict[str, tuple[list[str], str]]]
    summary: Callable[[Sequence[Any], Any], list[Table]]
    files: Sequence[str] = ()
    options: Sequence[Option] = ()
    definitions: Mapping[str, str] = field(default_factory=dict)
    needs: Mapping[str, str] = field(default_factory=dict)
    blocks: Mapping[str, str] = field(default_factory=dict)
    aliases: Sequence[str] = ()
    metrics: Sequence[Metric] = ()
    includes: Sequence[tuple[str, str]] = ()
    one_result: bool = False        # one result for the run (at the smallest size), not one per size
    done_sizes: Callable[[Sequence[Any], Any], set[Any]] | None = None
    estimate: Callable[[Any, DutHint], list[SizeEstimate]] | None = None

    def panel(self, option: Option) -> str:
        """The help panel ``option`` (one of this test's) is shown in."""
        return option.panel or f"{self.title} (RFC 2544 {self.section})"

    def notes(self, config: Any) -> list[str]:
        notes = getattr(config, "notes", None)
        return list(notes()) if callable(notes) else []


_TESTS: dict[str, TestType] = {}
_discovered = False


def _key(name: str) -> str:
    """The form names are matched in: ``Frame_Loss`` is ``frame-loss``."""
    return name.strip().lower().replace("_", "-")


def register(test: TestType) -> TestType:
    """Add ``test`` to the registry (a suite module does this at import)."""
    known = {_key(alias): t.name for t in _TESTS.values() for alias in (t.name, *t.aliases)}
    for name in (test.name, *test.aliases):
        if known.get(_key(name), test.name) != test.name:
            raise ValueError(f"test name {name!r} is taken by {known[_key(name)]!r}")
    _TESTS[test.name] = test
    return test


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    _discovered = True
    from . import suite
    for module in pkgutil.iter_modules(suite.__path__):
        importlib.import_module(f"{suite.__name__}.{module.name}")


def all_tests() -> list[TestType]:
    """Every registered test, in RFC 2544 order."""
    _discover()
    return sorted(_TESTS.values(), key=lambda t: t.order)


def names() -> list[str]:
    return [t.name for t in all_tests()]


def get(name: str) -> TestType:
    """The test named ``name`` (or one of its aliases); KeyError naming the known tests."""
    _discover()
    resolved = resolve_name(name)
    if resolved is None:
        raise KeyError(f"one or more of {allowed()}; not {name!r}")
    return _TESTS[resolved]


def resolve_name(name: str) -> str | None:
    """The registered name of the test ``name`` names (its name or an alias, ``_`` for ``-``, any
    case); None for none."""
    _discover()
    for test in _TESTS.values():
        if _key(name) in {_key(n) for n in (test.name, *test.aliases)}:
            return test.name
    return None


def allowed() -> str:
    """The test names, in RFC 2544 order, each with its aliases: what ``--tests`` takes."""
    return ", ".join(t.name + (f" (or {', '.join(t.aliases)})" if t.aliases else "") for t in all_tests())


def summary() -> str:
    """Every test, by RFC 2544 section and title, with what it includes (the command's help)."""
    return ", ".join(f"{t.section} {t.title.lower()}"
                     + "".join(f" with {section} {what}" for section, what in t.includes) for t in all_tests())
