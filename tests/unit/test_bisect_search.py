"""bisect's search and decision rules without measuring (experiments/bisect.py): the walk over the
first-parent line and over the DAG (git rev-list --bisect-all) with skips, the rules of a step,
Holm's step-down over the confirmations; on real git repositories made here."""

from __future__ import annotations

import os
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cyclebench.experiments import bisect as bis
from cyclebench.experiments.revisions import Built, Repo, Revision, RevisionError
from cyclebench.experiments.revpair import PairLook, Sitting
from cyclebench.model import Item

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@x", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True,
                          env=ENV).stdout.strip()


def linear_repo(root: Path, n: int) -> list[str]:
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    out = []
    for k in range(1, n + 1):
        (root / "f").write_text(f"{k}\n")
        git(root, "add", "f")
        git(root, "commit", "-q", "-m", f"c{k}")
        out.append(git(root, "rev-parse", "HEAD"))
    return out


@pytest.fixture(scope="module")
def line(tmp_path_factory: pytest.TempPathFactory) -> tuple[Repo, list[str]]:
    root = tmp_path_factory.mktemp("line") / "r"
    shas = linear_repo(root, 40)
    return Repo(root), shas


class FakeRun(bis._Run):
    """_Run.search with builds and verdicts made up: a revision is bad when ``culprit`` is its
    ancestor (or itself); ``unbuildable`` do not build; ``unclear`` are judged skip."""

    def __init__(self, repo: Repo, culprit: str, unbuildable: set[str] = frozenset(),  # type: ignore[assignment]
                 unclear: set[str] = frozenset(), all_parents: bool = False) -> None:  # type: ignore[assignment]
        self.repo, self.culprit, self.unbuildable, self.unclear = repo, culprit, unbuildable, unclear
        self.plan = bis.Plan("x", "y", all_parents=all_parents)
        self.measured: list[str] = []
        self.steps: list[bis.Step] = []
        self.on_step = self.steps.append
        self.state, self.states = bis.Bisection(), []
        self.on_state = self.states.append

        class WS:
            pass

        self.ws = WS()  # type: ignore[assignment]
        self.ws.repo = repo  # type: ignore[attr-defined]
        self.ws.build = self.build  # type: ignore[attr-defined]

    def build(self, rev: Revision) -> Built:
        ok = rev.sha not in self.unbuildable
        return Built(rev, Path("/nonexistent"), object() if ok else None,  # type: ignore[arg-type]
                     None if ok else "the build command exited 2", Path("/nonexistent/build.log"), False, 0.0)

    def judge(self, search: Any, item: Any, good: Any, bad: Any, mid: Built, n: int) -> bis.Step:
        sha = mid.revision.sha
        self.measured.append(sha)
        if sha in self.unclear:
            return bis.Step(item.label, n, mid.revision, "skip", "inconclusive after 2 sittings", run_id=1)
        verdict = "bad" if self.repo.is_ancestor(self.culprit, sha) else "good"
        return bis.Step(item.label, n, mid.revision, verdict, diff=0.0, low=0.0, high=0.0, run_id=1)


def search(run: FakeRun, good: str, bad: str) -> bis.Search:
    s = bis.Search("lib/work", run.repo.revision(good), run.repo.revision(bad))
    s = run.search(s, Item("lib/work", None), None, None)  # type: ignore[arg-type]
    # each step made a new Bisection, handed on as it was made, and so did the end: the last holds
    # the search as it ended
    assert run.states[-1] is run.state and run.state.searches == {"lib/work": s}
    assert [x.searches["lib/work"].steps for x in run.states] == [s.steps[:k] for k in range(1, len(s.steps) + 1)] \
        + [s.steps]
    return s


@pytest.mark.parametrize("culprit", [1, 2, 17, 23, 38, 39])
def test_first_parent_search_finds_every_culprit_in_log2_steps(line: tuple[Repo, list[str]], culprit: int) -> None:
    repo, shas = line
    run = FakeRun(repo, shas[culprit])
    s = search(run, shas[0], shas[-1])
    assert s.status == "found" and s.first_bad is not None and s.first_bad.sha == shas[culprit]
    assert len(run.measured) <= 6  # ceil(log2(39))


def test_a_revision_that_does_not_build_is_skipped_and_its_neighbour_taken(line: tuple[Repo, list[str]]) -> None:
    repo, shas = line
    run = FakeRun(repo, shas[22], unbuildable={shas[26]})
    s = search(run, shas[13], shas[-1])  # the first middle revision is commit 27
    assert s.status == "found" and s.first_bad.sha == shas[22]  # type: ignore[union-attr]
    skip = [x for x in s.steps if x.verdict == "skip"]
    assert [x.revision.sha for x in skip] == [shas[26]] and "does not build" in skip[0].reason
    assert not skip[0].measured and shas[26] not in run.measured


def test_skips_next_to_the_culprit_leave_candidates_not_a_wrong_commit(line: tuple[Repo, list[str]]) -> None:
    repo, shas = line
    run = FakeRun(repo, shas[10], unbuildable={shas[9]}, unclear={shas[10]})
    s = search(run, shas[0], shas[19])
    assert s.status == "ambiguous" and s.first_bad is None
    assert {c.sha for c in s.candidates} == {shas[9], shas[10], shas[11]}


def test_all_parents_walks_a_merged_branch_with_git_bisect_all(tmp_path: Path) -> None:
    """main: m1..m6; a side branch from m2 with s1..s5, the culprit s3, merged after m6; then m7, m8.
    The first-parent line sees only the merge; every parent finds s3."""
    root = tmp_path / "r"
    main = linear_repo(root, 6)
    git(root, "checkout", "-q", "-b", "side", main[1])
    side = []
    for k in range(1, 6):
        (root / "g").write_text(f"{k}\n")
        git(root, "add", "g")
        git(root, "commit", "-q", "-m", f"s{k}")
        side.append(git(root, "rev-parse", "HEAD"))
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = git(root, "rev-parse", "HEAD")
    for k in (7, 8):
        (root / "f").write_text(f"{k}\n")
        git(root, "commit", "-q", "-am", f"m{k}")
    head = git(root, "rev-parse", "HEAD")
    repo = Repo(root)
    run = FakeRun(repo, side[2], all_parents=True)
    s = search(run, main[0], head)
    assert s.status == "found" and s.first_bad.sha == side[2]  # type: ignore[union-attr]
    run = FakeRun(repo, side[2])
    s = search(run, main[0], head)
    assert s.status == "found" and s.first_bad.sha == merge  # type: ignore[union-attr]
    with pytest.raises(RevisionError, match="--all-parents"):
        repo.first_parent(side[0], head)


def look(diff: float, half: float, x: int = 0, y: int = 1, fraction: float = 1.0) -> PairLook:
    return PairLook(x, y, diff, half / 3, 3.0, diff - half, diff + half, 20, fraction, 300.0, 300.0 * (1 + diff))


def test_step_rules() -> None:
    step = bis._step_rule(0.02)
    assert step({(0, 1): look(0.04, 0.01)}, False) == "bad"
    assert step({(0, 1): look(0.0, 0.015)}, False) == "good"
    assert step({(0, 1): look(0.03, 0.02)}, False) is None
    assert step({(0, 1): look(0.03, 0.02)}, True) == "inconclusive"
    confirm = bis._confirm_rule(0.02)
    assert confirm({(0, 1): look(0.001, 0.01)}, False) == "no slowdown"
    assert confirm({(0, 1): look(0.04, 0.005)}, False) == "slower"
    # BAD = GOOD + 4% (CI ±0.5%): M within a hair of BAD is bad though M/GOOD alone was unclear
    three = bis._three_way_rule(0.02, look(0.04, 0.005))
    assert three({(0, 1): look(0.03, 0.02), (2, 1): look(0.0, 0.01, 2, 1)}, False) == "bad"
    assert three({(0, 1): look(0.01, 0.02), (2, 1): look(-0.04, 0.01, 2, 1)}, False) == "good"
    assert three({(0, 1): look(0.04, 0.01), (2, 1): look(-0.04, 0.01, 2, 1)}, False) == "conflict"
    assert three({(0, 1): look(0.02, 0.03), (2, 1): look(-0.02, 0.03, 2, 1)}, True) == "inconclusive"


def test_holm_step_down_confirms_more_once_one_is_confirmed() -> None:
    """Two benchmarks decided at α/2: A slower, B unclear at α/2 but clear at α/1."""
    from cyclebench.stats.sequential import boundaries

    fr = [0.5, 1.0]
    c2, c1 = boundaries(fr, 0.001)[-1], boundaries(fr, 0.002)[-1]
    se = 0.01
    diff = 0.02 + se * (c1 + c2) / 2  # low above T at c1, not at c2
    a = Sitting(Item("a", None), [], [], "", {(0, 1): tuple(look(0.1, 0.01, fraction=f) for f in fr)}, "slower")
    b = Sitting(Item("b", None), [], [], "", {(0, 1): tuple(PairLook(0, 1, diff, se, c2, diff - c2 * se,
                                                                     diff + c2 * se, 20, f, 1, 1) for f in fr)},
                "inconclusive")
    assert bis.holm_step_down([a, b], 0.002, 0.02) == {"a": "slower", "b": "slower"}
    a = replace(a, verdict="no slowdown")
    assert bis.holm_step_down([a, b], 0.002, 0.02) == {"a": "no slowdown", "b": "inconclusive"}
    assert np.isfinite(c1) and c1 < c2


def test_paths_inside_the_repository_are_read_from_the_revision(line: tuple[Repo, list[str]], tmp_path: Path) -> None:
    from cyclebench.experiments.options import BuildOptions
    from cyclebench.experiments.revisions import Recipe

    repo, _ = line
    src = tmp_path / "checkout"
    opts = BuildOptions(files=(repo.root / "bench" / "b.c", tmp_path / "mine.c"),
                        include_dirs=(repo.root / "include", Path("/usr/include/x")),
                        ldflags=("build/libfoo.a", "-Lbuild", "-lm", str(repo.root / "lib.a"), "/opt/lib.a"))
    got = Recipe(opts, ("make",)).spec_options(repo, src)
    assert got.files == (src / "bench" / "b.c", tmp_path / "mine.c")
    assert got.include_dirs == (src / "include", Path("/usr/include/x"))
    assert got.ldflags == (str(src / "build/libfoo.a"), f"-L{src / 'build'}", "-lm", str(src / "lib.a"), "/opt/lib.a")


def test_revisions_that_are_not_commits_and_directories_that_are_not_repositories(
        line: tuple[Repo, list[str]], tmp_path: Path) -> None:
    repo, shas = line
    assert repo.resolve(shas[3][:10]).sha == shas[3] and repo.resolve("HEAD~1").sha == shas[-2]
    for bad in ("no-such-branch", "--all", "", shas[3] + "x"):
        with pytest.raises(RevisionError):
            repo.resolve(bad)
    with pytest.raises(RevisionError, match="not in a git repository"):
        Repo(tmp_path)
    with pytest.raises(RevisionError, match="no such directory"):
        Repo(tmp_path / "missing")


def test_a_failed_build_is_kept_with_its_log_and_cached_by_tree(line: tuple[Repo, list[str]]) -> None:
    """The build command runs in the private checkout (git archive), never in the repository;
    its failure is cached: the second prepare does not run it again."""
    from cyclebench.experiments.options import BuildOptions
    from cyclebench.experiments.revisions import Recipe, prepare

    repo, shas = line
    before = git(repo.root, "status", "--porcelain", "--untracked-files=all")
    recipe = Recipe(BuildOptions(files=(repo.root / "f",)), ("sh", "-c", "ls f > listed; echo 'error: no' >&2; exit 3"))
    rev = repo.revision(shas[4])
    first = prepare(repo, rev, recipe)
    assert first.binary is None and not first.cached and first.reason == "the build command exited 3: error: no"
    assert (first.directory / "src" / "listed").read_text() == "f\n"  # ran in the checkout of revision 5
    assert (first.directory / "src" / "f").read_text() == "5\n"
    again = prepare(repo, rev, recipe)
    assert again.cached and again.reason == first.reason and again.directory == first.directory
    assert "error: no" in again.log.read_text()
    assert git(repo.root, "status", "--porcelain", "--untracked-files=all") == before
