"""The register map of a tester, as data: every gateware build (the simulation, a board's
bitstream) writes its map into the map store (:func:`wirespeed.paths.regmap_store`), one JSON
file per map hash, and the host loads the map of the tester it reaches by the hash the tester
reports (``id.map_hash``). So the host runs against a built simulation or a board without the
HDL toolchain; only when the store lacks a map and Amaranth is installed does the host work the
map out from the gateware's declaration (and keep it in the store).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wirespeed import regs
from wirespeed.gateware.config import ID_OFFSETS, TesterConfig
from wirespeed.gateware.regmap import MAGIC, RegisterMap

from ..errors import DeviceMismatch
from ..paths import regmap_store
from ..safeio import atomic_write_text
from ..transport import Transport

__all__ = ["save_map", "find_map", "map_of", "MapError"]


class MapError(DeviceMismatch):
    """No register map for the tester's gateware (one line, saying how to get one)."""


def _path(map_hash: int, store: Path | None = None) -> Path:
    return (store or regmap_store()) / f"{map_hash:08x}.json"


def save_map(rmap: RegisterMap, config_word: int, store: Path | None = None) -> Path:
    """Keep ``rmap`` (the map of a build whose ``id.config`` is ``config_word``) in the store;
    returns its file. Written whole or not at all (concurrent builds of the same map agree)."""
    path = _path(rmap.hash, store)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(rmap.to_json())
    data["config"] = f"{config_word:#010x}"
    atomic_write_text(path, json.dumps(data, indent=2) + "\n")
    return path


def find_map(map_hash: int, store: Path | None = None) -> RegisterMap | None:
    """The stored map with ``map_hash`` (None: none stored, or the file does not hold it)."""
    try:
        rmap = RegisterMap.from_json(_path(map_hash, store).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return rmap if rmap.hash == map_hash else None


def _declared(config: TesterConfig) -> RegisterMap | None:
    """The map the gateware declares for ``config``, when Amaranth is installed."""
    try:
        from wirespeed.gateware.top import build_register_map
    except ImportError:
        return None
    rmap: RegisterMap = build_register_map(config)
    return rmap


def map_of(transport: Transport, store: Path | None = None) -> tuple[RegisterMap, TesterConfig, int]:
    """The register map of the tester behind ``transport`` (see the module doc), its build
    configuration and its ``id.config`` word. Raises DeviceMismatch for a target that is not a
    wirespeed tester, ValueError for a configuration word this host does not know, MapError when
    no map can be had. A map worked out from this host's gateware may not be the tester's: the
    identity check (:meth:`~wirespeed.host.device.Device.connect`) refuses it."""
    names = list(ID_OFFSETS)
    words: dict[str, Any] = dict(zip(names, transport.read([ID_OFFSETS[n] for n in names])))
    if words[regs.ID.magic] != MAGIC:
        raise DeviceMismatch(f"{transport.url} is not a wirespeed tester (id.magic {words['id.magic']:#010x}, "
                             f"expected {MAGIC:#010x})")
    word, map_hash = words[regs.ID.config], words[regs.ID.map_hash]
    config = TesterConfig.from_word(word)
    rmap = find_map(map_hash, store)
    if rmap is None:
        # the declaration of this host's gateware: if it is not the tester's, the identity
        # check (Device.connect) says so, after the caller's own checks of the configuration
        rmap = _declared(config)
        if rmap is not None and rmap.hash == map_hash:
            save_map(rmap, word, store)
    if rmap is None:
        where = _path(map_hash, store)
        raise MapError(f"{transport.url}: no register map for its gateware (map hash {map_hash:#010x}, id.config "
                       f"{word:#010x}) in {where.parent}: build that gateware on this machine (the simulation, "
                       f"or 'wirespeed build'), or copy its regmap.json to {where}")
    return rmap, config, word
