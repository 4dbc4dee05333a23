"""will-it-scale test cases: recognise one in a C file and say how to build it (issue 17).

A will-it-scale test case (its API as documented; engine/wis.c is the adapter) defines
``char *testcase_description = "...";`` and ``void testcase(unsigned long long *iterations,
unsigned long nr)`` (or ``void *testcase(...)``), and may define ``testcase_prepare`` and
``testcase_cleanup`` and call ``new_task``. It has no main and includes nothing of
cyclebench. recognise() checks the two definitions with regular expressions on the source
with its comments blanked (no ctags, no preprocessor: a definition behind an #if counts).

The same source is built once per mode, as will-it-scale does: with ``-DTHREADS`` for threads
and without for processes; each build is a runner with the test case as its only benchmark
source and the engine compiled with ``-DCB_WIS_NAME="<file stem>"``, so it registers
``wis/<stem>`` (build.compile caches each like any other runner).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from cyclebench.build.compile import BuildSpec

GROUP = "wis"
MODES = ("threads", "processes")
MAX_SOURCE = 1 << 20  # bytes read to recognise a file: test cases are small; a 1 MiB file is not one

_TESTCASE = re.compile(
    r"\bvoid\s*(?:\*\s*)?testcase\s*\(\s*unsigned\s+long\s+long\s*\*\s*\w*\s*,\s*unsigned\s+long\s+\w*\s*\)\s*\{")
_DESCRIPTION = re.compile(r"\bchar\s*\*\s*(?:const\s+)?testcase_description\s*=")
_DESCRIPTION_TEXT = re.compile(r"\btestcase_description\s*=\s*((?:\"(?:[^\"\\\n]|\\.)*\"\s*)+);")
_PIECE = re.compile(r"\"((?:[^\"\\\n]|\\.)*)\"")
_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", '"': '"', "'": "'", "r": "\r", "0": "\0"}


@dataclass(frozen=True)
class TestCase:
    """A will-it-scale test case: its file, benchmark name (``wis/<stem>``) and description
    (the string literal of its ``testcase_description``, None when it is not one literal)."""

    path: Path
    name: str
    description: str | None

    __test__ = False  # not a pytest class, whatever its name


def strip_comments(text: str) -> str:
    """``text`` with every comment replaced by one space (newlines kept), string and character
    literals left as they are, so a commented-out definition is not seen."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            out.append(" ")
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            end = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, end))
            i = end
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _unescape(piece: str) -> str:
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(1)), piece)


def parse(text: str, path: Path) -> TestCase | None:
    """The test case defined by source ``text`` (of file ``path``), or None when it defines no
    ``testcase`` with will-it-scale's signature or no ``char *testcase_description``."""
    code = strip_comments(text)
    if not _TESTCASE.search(code) or not _DESCRIPTION.search(code):
        return None
    m = _DESCRIPTION_TEXT.search(code)
    description = "".join(_unescape(p) for p in _PIECE.findall(m.group(1))) if m else None
    return TestCase(path, f"{GROUP}/{path.stem}", description)


def recognise(path: Path) -> TestCase | None:
    """The will-it-scale test case in C file ``path``, or None (not one, not a .c file, or
    unreadable: the build then says what is wrong with it)."""
    if path.suffix != ".c":
        return None
    try:
        with path.open("rb") as f:
            text = f.read(MAX_SOURCE).decode(errors="replace")
    except OSError:
        return None
    return parse(text, path)


def _c_string(s: str) -> str:
    """``s`` as a C string literal (for a -D value: an argv item, no shell in between)."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def spec(base: BuildSpec, case: TestCase, mode: str) -> BuildSpec:
    """The runner of ``case`` in ``mode`` (threads: ``-DTHREADS``), from the user's build options
    ``base`` (compiler, flags, -I, -D, --ldflags): the test case as the only benchmark source,
    not held to -Werror (it is not ours), and the engine told its name."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}")
    defines = (*base.defines, "THREADS") if mode == "threads" else base.defines
    return replace(base, sources=(case.path,), defines=defines, werror=False,
                   engine_defines=(f"CB_WIS_NAME={_c_string(case.path.stem)}",
                                   f"CB_WIS_FILE={_c_string(str(case.path))}"))
