"""Profiles: named plans kept as config files in ``DATA/profiles/<name>.toml`` (or ``.yaml``),
the files ``wirespeed rfc2544 --config`` reads, and checked as it checks them
(:func:`wirespeed.cli.plans.plan_from_mapping`), so a profile the server accepts runs from the
command line and a config file of the command line loads here. A run's folder is the server's
(``DATA/runs/<id>``), so ``out``, ``force``, ``json`` and ``junit`` in a profile are read and checked
but not used.

A new data folder gets the profiles shipped in this package's ``profiles/`` folder
(:func:`install_shipped`): copies the user may edit or delete, never written over."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..cli.plans import PlanInput, PlanRefused, mapping_of_text, plan_from_mapping
from ..safeio import atomic_write_text
from .settings import Settings

__all__ = ["ProfileStore", "NAME", "SERVER_OWNED", "check_plan", "plan_of", "shipped_profiles", "install_shipped"]

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
SUFFIXES = {"toml": ".toml", "yaml": ".yaml"}
#: options of the command a server run cannot take (its tester, DUT source and folder are the server's)
SERVER_OWNED = {"resume": None, "dut_rtl": None, "dut_rtl_include": None, "dut_rtl_filelist": None,
                "dut_rtl_top": None, "pcap_wire": None, "dut_rules": None, "uart_faults": None,
                "management": "etherbone"}


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise PlanRefused("name", f"a profile name: a letter or digit, then letters, digits, '_' or '-' (at most 64); "
                                  f"not {name!r}")
    return name


def plan_of(data: dict[str, Any], settings: Settings) -> PlanInput:
    """``data`` (a config mapping) as a checked plan for this server's tester; PlanRefused names
    the key at fault."""
    defaults: dict[str, Any] = {"target": settings.target}
    if settings.dut is not None:
        defaults["dut"] = settings.dut
    return plan_from_mapping(data, defaults=defaults, check=lambda values: check_plan(values, settings))


def check_plan(values: dict[str, Any], settings: Settings) -> None:
    """PlanRefused for a value a run of this server cannot take (its target, :data:`SERVER_OWNED`)."""
    if values["target"] != settings.target:
        raise PlanRefused("target", f"this server's tester is {settings.target}; leave target out or give "
                                    f"{settings.target!r}; not {values['target']!r}")
    for name, allowed in SERVER_OWNED.items():
        if values[name] not in (allowed, [], ()):
            raise PlanRefused(name.replace("_", "-"), "not available in a server run (use the command line)")


def shipped_profiles() -> dict[str, str]:
    """The profiles shipped with the server: file name -> its text."""
    folder = resources.files("wirespeed.serve").joinpath("profiles")
    return {entry.name: entry.read_text(encoding="utf-8") for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(tuple(SUFFIXES.values())) and NAME.fullmatch(entry.name.rsplit(".", 1)[0])}


def install_shipped(folder: Path) -> list[str]:
    """Create the profiles ``folder`` with the shipped profiles in it, when it does not exist
    (a folder that exists is the user's, shipped profiles deleted from it included); the names
    of the files written. An existing file is never written over."""
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        return []
    written = []
    for name, text in shipped_profiles().items():
        try:
            with open(folder / name, "x", encoding="utf-8") as out:
                out.write(text)
        except FileExistsError:
            continue
        written.append(name)
    return written


class ProfileStore:
    """The profiles folder (see the module doc)."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self.folder = Path(settings.data) / "profiles"
        install_shipped(self.folder)

    def _path(self, name: str) -> Path | None:
        for suffix in (".toml", ".yaml", ".yml"):
            path = self.folder / (check_name(name) + suffix)
            if path.is_file() and not path.is_symlink():
                return path
        return None

    def plan(self, profile: str | None, text: str | None, fmt: str | None,
             values: dict[str, Any] | None) -> PlanInput:
        """The checked plan of a request (``POST /api/runs``, ``/api/estimate``): ``profile``'s
        keys, then ``text``'s (a config file in ``fmt``), then ``values`` over them (PlanRefused
        naming the key at fault, or ``profile`` when there is no such profile)."""
        data: dict[str, Any] = {}
        if profile is not None:
            found = self.get(profile)
            if found is None:
                raise PlanRefused("profile", f"no profile {profile!r}; the profiles are "
                                             f"{', '.join(p['name'] for p in self.names()) or 'none yet'}")
            data = dict(found["values"])
        if text is not None:
            data |= mapping_of_text(text, fmt or "toml")
        data |= values or {}
        return plan_of(data, self.settings)

    def names(self) -> list[dict[str, str]]:
        found = []
        for path in sorted(self.folder.iterdir()):
            if NAME.fullmatch(path.stem) and path.suffix in (".toml", ".yaml", ".yml") and not path.is_symlink():
                found.append({"name": path.stem, "format": "toml" if path.suffix == ".toml" else "yaml"})
        return found

    def get(self, name: str) -> dict[str, Any] | None:
        """The profile's file text, format and values (None: no such profile)."""
        path = self._path(name)
        if path is None:
            return None
        fmt = "toml" if path.suffix == ".toml" else "yaml"
        text = path.read_text(encoding="utf-8")
        return {"name": name, "format": fmt, "text": text, "values": mapping_of_text(text, fmt, name)}

    def put(self, name: str, text: str | None, fmt: str | None, values: dict[str, Any] | None) -> dict[str, Any]:
        """Save profile ``name`` from a file's ``text`` in ``fmt`` or from ``values`` (written as
        YAML), after checking it as a run's plan (PlanRefused)."""
        check_name(name)
        if text is None:
            if values is None:
                raise PlanRefused("text", "give the profile as text (with format toml or yaml) or as values")
            fmt, text = "yaml", yaml.safe_dump(values, sort_keys=False, allow_unicode=True)
        fmt = (fmt or "toml").lower()
        data = mapping_of_text(text, fmt, name)
        plan_of(data, self.settings)
        old = self._path(name)
        path = self.folder / (name + SUFFIXES[fmt])
        atomic_write_text(path, text)
        if old is not None and old != path:
            old.unlink()
        return {"name": name, "format": fmt, "text": text, "values": data}

    def delete(self, name: str) -> bool:
        path = self._path(name)
        if path is None:
            return False
        path.unlink()
        return True
