"""The API of plans before they run: ``POST /api/estimate``, what a plan would take, checked
as ``POST /api/runs`` checks it. Included by :func:`.api.create_app`."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from ..rfc2544.plan import PlanError
from .common import ApiError, PlanBody
from .history import estimate_json
from .profiles import ProfileStore
from .settings import Settings
from .store import RunStore

__all__ = ["plans_router"]


def plans_router(settings: Settings, store: RunStore, profiles: ProfileStore) -> APIRouter:
    """The routes of this module for the server's ``settings``, ``store`` and ``profiles``."""
    router = APIRouter()

    @router.post("/api/estimate", summary="What a plan would take: trials, time on the wire and wall time")
    def estimate(body: PlanBody) -> dict[str, Any]:
        """The plan (as ``POST /api/runs`` takes it) estimated before it starts: ``trials`` expected
        and ``most_trials`` the search bounds allow, ``wire_s`` (seconds of traffic and waits),
        ``wall_s`` (null in simulation when no earlier run recorded the simulation's pace),
        ``basis`` (what it assumes the DUT forwards), ``pace_from`` (the run whose pace it
        took, or null) and per test ``tests``."""
        from ..host.tester import ConnectError, describe_dut

        checked = profiles.plan(body.profile, body.text, body.format, body.values)
        dut = None
        if settings.target == "sim":
            try:
                dut = describe_dut(checked.dut, settings.target, checked.plan.addresses)
            except ConnectError:        # checked with the plan already; the estimate then takes the prior
                dut = None
        try:
            return estimate_json(checked.plan, dut, settings.target, store)
        except PlanError as exc:
            raise ApiError(422, exc.field.lstrip("-"), exc.message) from None

    return router
