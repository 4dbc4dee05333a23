"""Fleet jobs in the controller's database (`cyclebench fleet`, docs/fleet.md; migration 0005):
``fleet_jobs`` (one per `fleet run`: inventory, the command run on every host, status) and
``fleet_hosts`` (one per host of a job: its inventory name, outcome, why, the check's
findings, the ids of its runs in this database)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import func, insert, select, update

from cyclebench.store.db import Store, _guard, now
from cyclebench.store.schema import fleet_hosts, fleet_jobs


@_guard
def begin_job(store: Store, inventory: str, command: Sequence[str], mode: str) -> int:
    with store._write() as conn:
        return int(conn.execute(insert(fleet_jobs).values(
            started_at=now(), status="running", inventory=inventory, command=list(command), mode=mode,
        )).inserted_primary_key[0])


@_guard
def finish_job(store: Store, job_id: int, status: str) -> None:
    with store._write() as conn:
        conn.execute(update(fleet_jobs).where(fleet_jobs.c.id == job_id).values(status=status, finished_at=now()))


@_guard
def record_host(store: Store, job_id: int, host: str, status: str, reason: str | None = None,
                check: Any = None, run_ids: Sequence[int] = (), machine: Mapping[str, Any] | None = None) -> None:
    """One host's outcome in job ``job_id`` (its row replaced when recorded again)."""
    values = {"status": status, "reason": reason, "finished_at": now(), "check": check, "run_ids": list(run_ids),
              "machine": dict(machine) if machine else None}
    with store._write() as conn:
        n = conn.execute(update(fleet_hosts).where(fleet_hosts.c.job_id == job_id, fleet_hosts.c.host == host)
                         .values(**values)).rowcount
        if not n:
            conn.execute(insert(fleet_hosts).values(job_id=job_id, host=host, **values))


@_guard
def hosts_of(store: Store, job_id: int) -> list[dict[str, Any]]:
    with store.engine.connect() as conn:
        rows = conn.execute(select(fleet_hosts).where(fleet_hosts.c.job_id == job_id)
                            .order_by(fleet_hosts.c.id)).mappings().all()
    return [dict(r) for r in rows]


@_guard
def last_per_host(store: Store, hosts: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Per host (all, or those named), its newest fleet row joined with its job: host, status,
    reason, finished_at, run_ids, check, job_id, the job's command, status and start."""
    newest = select(func.max(fleet_hosts.c.id).label("id")).group_by(fleet_hosts.c.host)
    if hosts is not None:
        newest = newest.where(fleet_hosts.c.host.in_(list(hosts)))
    q = (select(fleet_hosts, fleet_jobs.c.command, fleet_jobs.c.status.label("job_status"),
                fleet_jobs.c.started_at.label("job_started_at"))
         .join(fleet_jobs, fleet_jobs.c.id == fleet_hosts.c.job_id)
         .where(fleet_hosts.c.id.in_(newest.scalar_subquery())).order_by(fleet_hosts.c.host))
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(q).mappings().all()]
