"""The API of the tester itself: ``GET /api/tester`` (what it is, what holds it, its
identification and calibration) and ``POST /api/tester/identify`` (connect now and read its
identification). Included by :func:`.api.create_app`."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter

from .. import __version__
from ..errors import ConnectError, WirespeedError
from ..locks import LockBusy
from .common import ApiError
from .history import calibration_json, newest_records
from .runs import Busy, RunManager
from .settings import Settings
from .store import RunStore, record_json

__all__ = ["tester_router"]


def tester_router(settings: Settings, store: RunStore, runs: RunManager) -> APIRouter:
    """The routes of this module for the server's ``settings``, ``store`` and ``runs``."""
    router = APIRouter()
    # the identification read by the last identify call (None: none since the server started)
    identified: dict[str, Any] = {}

    @router.get("/api/tester", summary="The tester: target, DUT and its model, identification, calibration, "
                                       "the run holding it")
    def tester() -> dict[str, Any]:
        from wirespeed.sim.dut_catalog import catalog

        from ..host.tester import ConnectError, describe_dut

        dut: dict[str, Any] | None = None
        if settings.dut is not None:
            try:
                dut = describe_dut(settings.dut, settings.target)
            except ConnectError as exc:
                dut = {"error": str(exc)}
        model = next((m for m in catalog()["models"] if dut and m["name"] == dut.get("model")), None)
        identification, calibration = None, None
        source: dict[str, Any] | None = None
        for run_id, record in newest_records(store, settings.target, 1):
            identification = record_json(record)["gateware"]
            source = {"run": run_id, "utc": record.started_utc}
            calibration = calibration_json(run_id, record)
        if identified and (source is None or identified["utc"] > source["utc"]):
            identification, source = identified["gateware"], {"run": None, "utc": identified["utc"]}
        # link: the gateware has no link-status register, so nothing reports it
        return {"target": settings.target, "dut": dut, "dut_model": model, "identification": identification,
                "identified_by_run": source["run"] if source else None,
                "identified_utc": source["utc"] if source else None,
                "calibration": calibration, "link": None,
                "busy": runs.active.id if runs.active is not None else None, "version": __version__}

    @router.post("/api/tester/identify", summary="Connect to the tester now and read its identification "
                                                 "(409 while a run holds it)")
    def identify() -> dict[str, Any]:
        """Opens the tester as a run would (a simulation is started, and built first when it is
        not yet) and reads its ID block; 409 while a run of this server or another process, or
        another identify, holds it; 503 naming the field when it cannot be reached."""
        try:
            with runs.holding("being identified"), \
                    settings.connector(settings.target, settings.dut, command="wirespeed serve (identify)") as t:
                gateware = t.ident.model_dump(mode="json")
        except Busy as exc:
            raise ApiError(409, "run", exc.message, run=exc.run) from None
        except LockBusy as exc:
            raise ApiError(409, "run", str(exc), run=None) from None
        except ConnectError as exc:
            raise ApiError(503, exc.field.lstrip("-"), exc.message) from None
        except WirespeedError as exc:           # the tester answered wrongly or not at all
            raise ApiError(503, "target", str(exc)) from None
        identified.update(gateware=gateware, utc=datetime.now(UTC).isoformat(timespec="seconds"))
        return {"identification": gateware, "identified_utc": identified["utc"]}

    return router
