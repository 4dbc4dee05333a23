"""stdout a pipe whose reader has gone (`cyclebench show 1 | head -3`): a normal end, exit 0,
nothing said on stderr (pipe(7): the writer gets EPIPE). The reader here is gone before the
command starts, so the first write meets EPIPE whatever the output's size."""

from __future__ import annotations

import os
import subprocess

import pytest

from .conftest import Shared, database
from .harness import Lab

pytestmark = pytest.mark.audit


@pytest.mark.parametrize("argv", [("export", "1", "--format", "csv"), ("show", "1"), ("export", "--json", "-"),
                                  ("runs",)],
                         ids=["export-csv", "show", "export-json-stdout", "runs"])
def test_a_closed_pipe_on_stdout_is_a_normal_end(lab: Lab, shared: Shared, argv: tuple[str, ...]) -> None:
    database(lab, shared, "seed")
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(lab.argv(argv), stdin=subprocess.DEVNULL, stdout=w, stderr=subprocess.PIPE, cwd=lab.cwd,
                           env=lab.env, text=True, timeout=60)
    finally:
        os.close(w)
    assert (p.returncode, p.stderr) == (0, ""), p.stderr
    assert not (lab.cwd / "-").exists()  # `--json -` is stdout, not a file named "-"
