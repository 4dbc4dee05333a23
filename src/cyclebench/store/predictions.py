"""A run's predictions (the ``predictions`` table, migration 0008): rows made from
prediction.Prediction records, written with the run, read back for `show`'s and the run file's
sake (runfile: the optional key ``predictions``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from cyclebench.model import Result
from cyclebench.prediction import (
    MCA,
    OSACA,
    Block,
    BlockDetail,
    BlockProfile,
    BlockTotals,
    HotLoop,
    LoopDetail,
    ModelResult,
    NotModelled,
    Prediction,
    PredictionDetail,
    PredictionRow,
)
from cyclebench.store.columns import PREDICTION_FIELDS
from cyclebench.store.db import Store, StoreError, now
from cyclebench.store.rows import result_of


def rows_of(p: Prediction) -> list[PredictionRow]:
    """One row per tool of ``p``: its figures per trip and per op, and in ``detail`` why that CPU
    model, where the loop is and how it was found, its assembly, what is not modelled, notes."""
    out: list[PredictionRow] = []
    loop = p.loop
    for m in p.models:
        detail: PredictionDetail = {"cpu_reason": m.cpu_reason, "notes": list(m.notes),
                                    "critical_path": m.critical_path, "unpriced": list(m.unpriced)}
        if loop is not None:
            detail.update(loop=LoopDetail(function=loop.function, object=loop.obj, start=loop.start, end=loop.end,
                                          source=loop.source, ir_per_op=loop.ir_per_op,
                                          loop_ir_per_op=loop.loop_ir_per_op, assembly=loop.assembly()),
                          not_modelled=list(loop.unmodelled))
        if p.reason and loop is not None:
            detail["loop_note"] = p.reason
        if (b := p.blocks_of(m.tool)) is not None:
            detail["blocks"] = [_block_detail(x) for x in b.ranked()[:STORED_BLOCKS]]
            detail["block_totals"] = BlockTotals(ir_per_op=b.ir_per_op, coverage=b.coverage,
                                                 cycles_per_op=b.cycles_per_op, throughput_per_op=b.throughput_per_op,
                                                 not_modelled=[(n.what, n.text, n.function, n.count, n.share)
                                                               for n in b.not_modelled], events=dict(b.events),
                                                 unpriced=[list(u) for u in b.unpriced])
        out.append({"bench": p.bench, "param": p.param, "variant": p.variant, "tool": m.tool, "status": m.status,
                    "reason": m.reason, "tool_version": m.version, "mcpu": m.cpu, "cpu_model": p.cpu_model,
                    "cycles_per_iter": m.cycles, "trips_per_op": loop.trips_per_op if loop else None,
                    "cycles_per_op": p.cycles_per_op(m.tool), "throughput": m.throughput, "lcd": m.lcd,
                    "coverage": p.coverage_of(m.tool), "detail": detail})
    return out


STORED_BLOCKS = 20  # the blocks kept with a prediction, most cycles per op first (lz4's compression: 53)


def _priced(coverage: object, ir: object) -> float | None:
    """The loop's priced instructions per op back from the stored coverage (None: not stored)."""
    if isinstance(coverage, (int, float)) and isinstance(ir, (int, float)):
        return float(coverage) * float(ir)
    return None


def _block_detail(b: Block) -> BlockDetail:
    return BlockDetail(function=b.function, object=b.obj, start=b.start, end=b.end, line=b.line, kind=b.kind,
                       count=b.count, ir=b.ir, cycles=b.cycles, throughput=b.throughput,
                       unmodelled=list(b.unmodelled), instructions=list(b.instructions))


def _blocks_of(detail: Mapping[str, Any]) -> BlockProfile | None:
    """The BlockProfile a stored detail holds (its stored blocks only), None when it holds none."""
    totals, stored = detail.get("block_totals"), detail.get("blocks")
    if not isinstance(totals, Mapping) or not isinstance(stored, list):
        return None
    blocks = tuple(Block(function=str(d.get("function")), obj=str(d.get("object")), start=int(d.get("start") or 0),
                         end=int(d.get("end") or 0), count=float(d.get("count") or 0), ir=float(d.get("ir") or 0),
                         instructions=tuple(str(t) for t in d.get("instructions") or ()),
                         unmodelled=tuple(str(t) for t in d.get("unmodelled") or ()), line=d.get("line"),
                         cycles=d.get("cycles"), throughput=d.get("throughput"), kind=str(d.get("kind") or "block"))
                   for d in stored if isinstance(d, Mapping))
    nm = tuple(NotModelled(str(w), str(t), str(f), float(c), float(sh))
               for w, t, f, c, sh in (x for x in totals.get("not_modelled") or () if len(x) == 5))
    return BlockProfile(blocks=blocks, ir_per_op=float(totals.get("ir_per_op") or 0.0),
                        coverage=float(totals.get("coverage") or 0.0), not_modelled=nm,
                        cycles_per_op=totals.get("cycles_per_op"), throughput_per_op=totals.get("throughput_per_op"),
                        events=tuple((str(k), float(v)) for k, v in (totals.get("events") or {}).items()
                                     if isinstance(v, (int, float))),
                        unpriced=tuple((str(f), float(sh), str(t)) for f, sh, t in
                                       (x for x in totals.get("unpriced") or () if len(x) == 3)))


def add(store: Store, run_id: int, rows: Iterable[Mapping[str, Any]]) -> int:
    """Insert prediction rows of run ``run_id`` in one transaction; returns how many. Raises
    StoreError when the database fails (nothing written)."""
    from sqlalchemy import insert
    from sqlalchemy.exc import SQLAlchemyError

    from cyclebench.store.schema import predictions

    values = [{**{k: r.get(k) for k in PREDICTION_FIELDS}, "run_id": run_id,
               "variant": r.get("variant") or "", "created_at": r.get("created_at") or now()} for r in rows]
    if not values:
        return 0
    try:
        with store.engine.begin() as conn:
            conn.execute(insert(predictions), values)
    except (SQLAlchemyError, sqlite3.Error) as e:
        raise StoreError(f"database error: {str(e).splitlines()[0]}") from e
    return len(values)


def of_run(store: Store, run_id: int) -> list[PredictionRow]:
    """The run's prediction rows (PREDICTION_FIELDS), in the order they were stored: read with
    sqlite3 where store/reads.py reads the file (`show` imports no SQLAlchemy), else SQLAlchemy."""
    if store.reads is not None:
        return [cast(PredictionRow, {k: r[k] for k in PREDICTION_FIELDS}) for r in store.reads.predictions(run_id)]
    from sqlalchemy import select
    from sqlalchemy.exc import SQLAlchemyError

    from cyclebench.store.schema import predictions

    try:
        with store.engine.connect() as conn:
            got = conn.execute(select(predictions).where(predictions.c.run_id == run_id)
                               .order_by(predictions.c.id)).mappings().all()
    except (SQLAlchemyError, sqlite3.Error) as e:
        raise StoreError(f"database error: {str(e).splitlines()[0]}") from e
    return [cast(PredictionRow, {k: r[k] for k in PREDICTION_FIELDS}) for r in got]


def by_key(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, int | None, str], dict[str, Mapping[str, Any]]]:
    """{(bench, param, variant): {tool: row}}."""
    out: dict[tuple[str, int | None, str], dict[str, Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault((r["bench"], r["param"], r.get("variant") or ""), {})[r["tool"]] = r
    return out


def newest_measured(store: Store, bench: str, param: int | None, build_key: str
                    ) -> tuple[Result | None, int | None]:
    """What `explain` sets its prediction beside: the newest stored result of ``bench`` at
    ``param`` with cycles~ measured in the build ``build_key`` (the build cache's key: sources,
    headers, compiler, flags, link flags), its row with ``run_id``; the plain build only (a
    ``variants`` flag set or an allocator is another binary). (row, None), or (None, the newest run
    that measured it in another build; None: none did). Raises StoreError."""
    from sqlalchemy import select
    from sqlalchemy.exc import SQLAlchemyError

    from cyclebench.store.schema import results, runs

    q = (select(results, runs.c.build.label("run_build")).join(runs, runs.c.id == results.c.run_id)
         .where(results.c.bench == bench, results.c.cycles_per_op.is_not(None),
                results.c.status.in_(("ok", "disturbed")))
         .order_by(results.c.id.desc()))
    q = q.where(results.c.param.is_(None) if param is None else results.c.param == param)
    other = None
    try:
        with store.engine.connect() as conn:
            for row in conn.execute(q).mappings():
                build = row["run_build"]
                if not row["variant"] and isinstance(build, Mapping) and build.get("key") == build_key:
                    return result_of({k: v for k, v in row.items() if k != "run_build"}), None
                other = other if other is not None else int(row["run_id"])
    except (SQLAlchemyError, sqlite3.Error) as e:
        raise StoreError(f"database error: {str(e).splitlines()[0]}") from e
    except ValueError as e:  # a damaged build column (JSON that does not decode)
        raise StoreError(f"a stored run's build is damaged: {e}") from e
    return None, other


def predictions_of(rows: Sequence[Mapping[str, Any]]) -> list[Prediction]:
    """Stored prediction rows (of_run's) back as the Predictions their table is printed from
    (report.predict.predicted_table): one per benchmark × parameter × variant, its models in the
    order stored; the loop as far as it was stored (where it is, trips and instructions per op,
    what is not modelled: not its instructions, which only `explain` prints)."""
    out: list[Prediction] = []
    for (bench, param, variant), tools in by_key(rows).items():
        models, loop, reason, cpu_model = [], None, None, None
        by_tool: dict[str, BlockProfile] = {}
        for tool, r in tools.items():
            detail = r.get("detail") if isinstance(r.get("detail"), Mapping) else {}
            if (got := _blocks_of(detail)) is not None:
                by_tool[str(tool)] = got
            ld = detail.get("loop")
            if loop is None and isinstance(ld, Mapping):
                trips = r.get("trips_per_op")
                loop = HotLoop(function=str(ld.get("function") or "?"), obj=str(ld.get("object") or "?"),
                               start=int(ld.get("start") or 0), end=int(ld.get("end") or 0), instructions=(),
                               source=str(ld.get("source") or "?"),
                               trips_per_op=float(trips) if isinstance(trips, (int, float)) else None,
                               ir_per_op=ld.get("ir_per_op"), loop_ir_per_op=ld.get("loop_ir_per_op"),
                               outside=tuple(str(x) for x in detail.get("not_modelled") or ()),
                               priced_ir_per_op=_priced(r.get("coverage"), ld.get("ir_per_op")))
            reason = reason or detail.get("loop_note") or (r.get("reason") if r.get("status") == "no loop" else None)
            cpu_model = cpu_model or r.get("cpu_model")
            models.append(ModelResult(tool=str(tool), status=str(r.get("status")), reason=r.get("reason"),
                                      version=r.get("tool_version"), cpu=r.get("mcpu"),
                                      cpu_reason=detail.get("cpu_reason"), cycles=r.get("cycles_per_iter"),
                                      throughput=r.get("throughput"), lcd=r.get("lcd"),
                                      critical_path=detail.get("critical_path"),
                                      notes=tuple(detail.get("notes") or ()),
                                      unpriced=tuple(detail.get("unpriced") or ())))
        out.append(Prediction(bench=bench, param=param, variant=variant, cpu_model=cpu_model, loop=loop,
                              models=tuple(models), reason=reason,
                              blocks=by_tool.get(MCA, next(iter(by_tool.values()), None)),
                              osaca_blocks=by_tool.get(OSACA)))
    return out
