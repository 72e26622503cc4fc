"""Where wirespeed keeps what it builds and learns on this machine."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["cache_dir", "regmap_store"]


def cache_dir() -> Path:
    """Build cache: $WIRESPEED_CACHE, else ~/.cache/wirespeed."""
    root = os.environ.get("WIRESPEED_CACHE") or Path.home() / ".cache" / "wirespeed"
    return Path(root).expanduser()


def regmap_store() -> Path:
    """The register maps of the gateware built here, one file per map hash
    (:mod:`wirespeed.host.maps`)."""
    return cache_dir() / "regmaps"
