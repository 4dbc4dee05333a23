"""will-it-scale test cases: recognise one in a C file and say how to build it (docs/will-it-scale.md).

A will-it-scale test case defines ``char *testcase_description = "...";`` and a function
``testcase`` that never returns and bumps ``*iterations`` once per operation; it may define
``testcase_prepare`` and ``testcase_cleanup`` and call ``new_task``. It has no main and
includes nothing of cyclebench. will-it-scale's harness (its main.c) declares
``extern void *testcase(unsigned long long *iterations, unsigned long nr)`` and, C checking no
types across files, links any definition of that name; its own 60 test cases use three:
``void testcase(unsigned long long *iterations, unsigned long nr)`` (56), ``void
testcase(unsigned long *iteration, unsigned long nr)`` (tlb_flush1..3: the same 64 bits on
LP64) and ``void testcase(unsigned long long *iterations)`` (lseek2: no task index). So a
definition is recognised when its first parameter points at a 64-bit unsigned counter
(``unsigned long long``, ``unsigned long``, ``uint64_t``) and a second, if any, is an integer;
its return type does not matter (``void``, ``void *``, ``int``: it never returns).
recognise() checks the definitions with regular expressions on the source with its comments
blanked (no ctags, no preprocessor: a definition behind an #if counts); diagnose() says in one
line why a file that defines ``testcase`` or its description is not a test case.

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

# a definition of testcase: its return type's last words, its parameter list, then the body's brace
_TESTCASE = re.compile(r"(\w+\s*\**)\s*\btestcase\s*\(([^()]*)\)\s*\{")
_COUNTER = re.compile(  # the first parameter: a pointer to a 64-bit unsigned counter, optionally named
    r"(?:const\s+|volatile\s+)*(unsigned\s+long\s+long(?:\s+int)?|unsigned\s+long(?:\s+int)?|uint64_t)"
    r"\s*\*\s*(?:restrict\s+|volatile\s+)*\w*")
_INTEGER_WORDS = {"unsigned", "signed", "long", "int", "short", "const", "size_t"}
_CYCLEBENCH = re.compile(r"cyclebench\.h|\bCB_[A-Z_]+\s*\(")
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
    counter: str = "unsigned long long"  # the C type *iterations points at (tlb_flush1..3: unsigned long)

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


def _integer(param: str) -> bool:
    """Whether parameter text ``param`` (``unsigned long nr``, ``int``) declares an integer."""
    words = param.split()
    if len(words) > 1 and words[-1] not in _INTEGER_WORDS:
        words = words[:-1]  # the parameter's name
    return bool(words) and all(w in _INTEGER_WORDS for w in words)


def _signature(ret: str, params: str) -> str | None:
    """The counter's C type when ``<ret> testcase(<params>)`` is a signature will-it-scale's
    harness counts with (see the module's docstring), else None. ``ret`` is any: never reached."""
    parts = [" ".join(p.split()) for p in params.split(",")]
    m = _COUNTER.fullmatch(parts[0])
    if m is None or len(parts) > 2 or (len(parts) == 2 and not _integer(parts[1])):
        return None
    return " ".join(m.group(1).split()).removesuffix(" int")


def _scan(code: str) -> tuple[str | None, list[str]]:
    """(the counter type of the first callable testcase definition or None, every definition's
    signature as written, for diagnose)."""
    seen = []
    for m in _TESTCASE.finditer(code):
        ret, params = m.group(1), m.group(2)
        if (counter := _signature(ret, params)) is not None:
            return counter, seen
        seen.append(f"{' '.join(ret.split())} testcase({' '.join(params.split())})")
    return None, seen


def parse(text: str, path: Path) -> TestCase | None:
    """The test case defined by source ``text`` (of file ``path``), or None when it defines no
    ``testcase`` will-it-scale's harness can call or no ``char *testcase_description``."""
    code = strip_comments(text)
    counter, _ = _scan(code)
    if counter is None or not _DESCRIPTION.search(code):
        return None
    m = _DESCRIPTION_TEXT.search(code)
    description = "".join(_unescape(p) for p in _PIECE.findall(m.group(1))) if m else None
    return TestCase(path, f"{GROUP}/{path.stem}", description, counter)


def diagnose(text: str) -> str | None:
    """Why source ``text``, which is not a test case (parse gave None), is not a cyclebench
    benchmark file either, in a phrase; None when it may be one (it includes cyclebench.h or
    uses a CB_ macro, docs/c-api.md) or names no ``testcase`` (a helper linked beside one)."""
    code = strip_comments(text)
    counter, seen = _scan(code)
    if _CYCLEBENCH.search(code):
        return None
    if seen:
        return (f"defines {seen[0]}, but will-it-scale's harness passes testcase a pointer to a 64-bit "
                "unsigned counter and the task's index (void testcase(unsigned long long *iterations, "
                "unsigned long nr))")
    if counter is not None:
        return "defines testcase but no char *testcase_description (will-it-scale's harness reads it)"
    if _DESCRIPTION.search(code):
        return "defines testcase_description but no testcase(unsigned long long *iterations, unsigned long nr) body"
    return None


def is_cyclebench(text: str) -> bool:
    """Whether source ``text`` includes cyclebench.h or uses a CB_ macro (a benchmark file)."""
    return _CYCLEBENCH.search(strip_comments(text)) is not None


def read_source(path: Path) -> str | None:
    """The first MAX_SOURCE bytes of ``path`` as text, or None when it cannot be read."""
    try:
        with path.open("rb") as f:
            return f.read(MAX_SOURCE).decode(errors="replace")
    except OSError:
        return None


def recognise(path: Path) -> TestCase | None:
    """The will-it-scale test case in C file ``path``, or None (not one, not a .c file, or
    unreadable: the build then says what is wrong with it)."""
    if path.suffix != ".c":
        return None
    text = read_source(path)
    return None if text is None else parse(text, path)


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
    # an unsigned long counter is the engine's 64-bit slot only where long has 64 bits: engine/wis.c
    # refuses to build otherwise, so the row says why instead of counting in half a slot
    counter = ("CB_WIS_LONG_COUNTER=1",) if case.counter == "unsigned long" else ()
    return replace(base, sources=(case.path,), defines=defines, werror=False,
                   engine_defines=(f"CB_WIS_NAME={_c_string(case.path.stem)}",
                                   f"CB_WIS_FILE={_c_string(str(case.path))}", *counter))
