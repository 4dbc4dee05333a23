"""Fleet jobs in the controller's database (`cyclebench fleet`, docs/fleet.md; migration 0005):
``fleet_jobs`` (one per `fleet run`: inventory, the command run on every host, status) and
``fleet_hosts`` (one per host of a job: its inventory name, outcome, why, the check's
findings, the ids of its runs in this database). A host's outcome goes in as a
model.FleetHost and comes back as a model.FleetHostRow: the columns are flattened here only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, func, insert, select, update
from sqlalchemy.engine import RowMapping

from cyclebench.model import FleetHost, FleetHostRow, Machine
from cyclebench.store.db import Store, _guard, now
from cyclebench.store.schema import fleet_hosts, fleet_jobs


@_guard
def begin_job(store: Store, inventory: str, command: Sequence[str], mode: str) -> int:
    """A new job, status ``running``: its id. ``mode``: bundles | direct."""
    with store._write() as conn:
        return int(conn.execute(insert(fleet_jobs).values(
            started_at=now(), status="running", inventory=inventory, command=list(command), mode=mode,
        )).inserted_primary_key[0])


@_guard
def finish_job(store: Store, job_id: int, status: str) -> None:
    """Job ``job_id`` ended: complete | interrupted | failed."""
    with store._write() as conn:
        conn.execute(update(fleet_jobs).where(fleet_jobs.c.id == job_id).values(status=status, finished_at=now()))


@_guard
def record_host(store: Store, job_id: int, outcome: FleetHost) -> None:
    """One host's outcome in job ``job_id`` (its row replaced when recorded again; ``results`` is
    not stored: the runs hold them)."""
    values = {"status": outcome.status, "reason": outcome.reason, "finished_at": now(),
              "check": None if outcome.check is None else [dict(f) for f in outcome.check],
              "run_ids": list(outcome.run_ids), "machine": outcome.machine.to_json() if outcome.machine else None}
    with store._write() as conn:
        n = conn.execute(update(fleet_hosts).where(fleet_hosts.c.job_id == job_id,
                                                   fleet_hosts.c.host == outcome.host).values(**values)).rowcount
        if not n:
            conn.execute(insert(fleet_hosts).values(job_id=job_id, host=outcome.host, **values))


def _rows() -> Select[Any]:
    """A fleet_hosts row joined with its job's command, status and start."""
    return (select(fleet_hosts, fleet_jobs.c.command, fleet_jobs.c.status.label("job_status"),
                   fleet_jobs.c.started_at.label("job_started_at"))
            .join(fleet_jobs, fleet_jobs.c.id == fleet_hosts.c.job_id))


def _row(r: RowMapping) -> FleetHostRow:
    check = r["check"]
    return FleetHostRow(
        job_id=int(r["job_id"]), host=str(r["host"]), status=str(r["status"]), reason=r["reason"],
        finished_at=r["finished_at"], check=tuple(check) if isinstance(check, list) else None,
        run_ids=tuple(int(i) for i in r["run_ids"] or ()), machine=Machine.from_json(r["machine"]),
        command=tuple(str(a) for a in r["command"] or ()), job_status=str(r["job_status"]),
        job_started_at=str(r["job_started_at"]))


@_guard
def hosts_of(store: Store, job_id: int) -> list[FleetHostRow]:
    """The hosts of job ``job_id``, in the order they were recorded."""
    with store.engine.connect() as conn:
        rows = conn.execute(_rows().where(fleet_hosts.c.job_id == job_id).order_by(fleet_hosts.c.id)).mappings()
        return [_row(r) for r in rows]


@_guard
def last_per_host(store: Store, hosts: Sequence[str] | None = None) -> list[FleetHostRow]:
    """Per host (all, or those named), its newest fleet row, by host name."""
    newest = select(func.max(fleet_hosts.c.id).label("id")).group_by(fleet_hosts.c.host)
    if hosts is not None:
        newest = newest.where(fleet_hosts.c.host.in_(list(hosts)))
    q = _rows().where(fleet_hosts.c.id.in_(newest.scalar_subquery())).order_by(fleet_hosts.c.host)
    with store.engine.connect() as conn:
        return [_row(r) for r in conn.execute(q).mappings()]
