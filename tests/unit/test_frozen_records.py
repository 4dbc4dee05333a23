"""No record is mutated after it is made (docs/architecture.md, "A new record kind"): the records
that flow from the runner through the experiments to the reports are frozen dataclasses, and a
transformation makes a new one (``dataclasses.replace``). A class made mutable again is caught
here; a new mutable dataclass must say why it is working state and not a record."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cyclebench.build.compile import Pruned
from cyclebench.experiments.bisect import Bisection, Search
from cyclebench.experiments.profile import Clock
from cyclebench.experiments.revpair import Sides, Sitting
from cyclebench.experiments.run import Prepared as RunPrepared
from cyclebench.experiments.run import RunConfig
from cyclebench.experiments.scale import Prepared as ScalePrepared
from cyclebench.experiments.scale import ScaleConfig
from cyclebench.experiments.sequential import Sequential
from cyclebench.experiments.variants import BenchResult
from cyclebench.experiments.variants import Built as VariantBuilt
from cyclebench.experiments.wis import Built as WisBuilt
from cyclebench.experiments.wis import OpCostConfig
from cyclebench.model import Outcome, ScaleRun, Series
from cyclebench.report.export._rows import Group
from cyclebench.report.fit import Layout, _Row
from cyclebench.report.site import Block, Written
from cyclebench.report.site.tables import Cell, HtmlTable, Row
from cyclebench.runner.child import Child
from cyclebench.runner.perf_record import Annotation, Hot
from cyclebench.runner.profile import Calls, Simulated
from cyclebench.runner.scaling import ScaleOptions
from cyclebench.stats.repetitions import Metric

SRC = Path(__file__).resolve().parents[2] / "src" / "cyclebench"

RECORDS = [Outcome, ScaleRun, Series, Metric, Search, Bisection, RunConfig, RunPrepared, ScaleConfig, ScalePrepared,
           WisBuilt, OpCostConfig, VariantBuilt, BenchResult, Clock, Sequential, Sitting, Sides, Child, ScaleOptions,
           Hot, Annotation, Calls, Simulated, Pruned, Layout, _Row, Group, Block, Written, Cell, Row, HtmlTable]

# dataclasses that are one function's or one object's working state, each saying so where declared
WORKING_STATE = {("experiments/revcompare.py", "Workspace"), ("experiments/selftest.py", "_Ctx")}


def _some(cls: type) -> object:
    """An instance of ``cls``, every field without a default given None (no field is checked)."""
    return cls(**{f.name: None for f in dataclasses.fields(cls)
                  if f.init and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING})


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_a_record_rejects_assignment(cls: type) -> None:
    record = _some(cls)
    name = dataclasses.fields(cls)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(record, name, None)
    assert getattr(dataclasses.replace(record), name) == getattr(record, name)  # a new one is made by replace


def test_every_other_dataclass_is_working_state_and_says_so() -> None:
    """Every ``@dataclass`` in src/ is frozen, but those in WORKING_STATE, whose declaration says
    (on its line) why they are working state and not a record."""
    mutable = set()
    for path in SRC.rglob("*.py"):
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.lstrip().startswith("@dataclass") and "frozen=True" not in line:
                name = re.match(r"\s*class (\w+)", lines[i + 1])
                assert name, f"{path}:{i + 1}: no class under the decorator"
                where = (str(path.relative_to(SRC)), name.group(1))
                assert "working state" in line, f"{where}: a mutable dataclass without saying why"
                mutable.add(where)
    assert mutable == WORKING_STATE
