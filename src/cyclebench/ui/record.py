"""A command's options as one frozen record: each field declared once, as the click option or
argument that fills it (``option``, ``argument``) or as a shared group of options that makes it
(``group``: build_options → ``BuildOptions``, runner_options → ``RunnerOptions``, …); ``takes``
turns the record into the command's parameters and hands the function one record.

    @dataclass(frozen=True, kw_only=True)
    class Args:
        globs: tuple[str, ...] = option("-b", "--bench", multiple=True, help="…")
        db: str | None = group(db_option)

    @click.command()
    @takes(Args)
    def run(a: Args) -> None: ...

The parameters appear on ``--help`` in the record's field order. A field's default is its
option's (``()`` for a repeatable option or an ``nargs=-1`` argument), so a test may build a
record with only the fields it cares about — except a group's, which it always gives.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

T = TypeVar("T")
R = TypeVar("R")
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

_CLICK = "cyclebench.click"


def option(*decls: str, **kw: Any) -> Any:
    """A field filled by ``click.option(*decls, NAME, **kw)`` (NAME: the field's name)."""
    return _field(click.option, decls, kw)


def argument(**kw: Any) -> Any:
    """A field filled by ``click.argument(NAME, **kw)``."""
    return _field(click.argument, (), kw)


def group(*decorators: Decorator) -> Any:
    """A field made by shared decorators (applied in the order given, the first outermost) that
    pass the command a keyword of the field's name: ``build`` (build_options), ``pin``
    (runner_options), ``output`` (format_option), ``label_args``, ``db``, ``json_path``, …"""
    return dataclasses.field(metadata={_CLICK: decorators})


def _field(kind: Callable[..., Decorator], decls: tuple[str, ...], kw: Mapping[str, object]) -> Any:
    """A dataclass field whose default is the option's and whose metadata makes its click
    decorator: ``kw`` are click.option's (or click.argument's) keyword arguments, which click's
    own annotations leave untyped (``**attrs: Any``); read here: multiple, nargs, default, is_flag."""
    many = kw.get("multiple") or kw.get("nargs") == -1
    default = kw.get("default", () if many else False if kw.get("is_flag") else None)
    make = functools.partial(_bound, kind, decls, kw)
    return dataclasses.field(default=default, metadata={_CLICK: make})


def _bound(kind: Callable[..., Decorator], decls: tuple[str, ...], kw: Mapping[str, object], name: str
           ) -> Decorator:
    return kind(*decls, name, **kw)


def takes(record: type[T]) -> Callable[[Callable[[T], R]], Callable[..., R]]:
    """Declares ``record``'s fields as the command's parameters and calls the function with one
    ``record(**parameters)``. Raises TypeError at import for a field declared with neither
    ``option``, ``argument`` nor ``group``."""

    def deco(f: Callable[[T], R]) -> Callable[..., R]:
        @functools.wraps(f)
        def command(**kw: Any) -> R:
            return f(record(**kw))

        decorators: list[Decorator] = []
        for fld in dataclasses.fields(record):  # type: ignore[arg-type]
            spec = fld.metadata.get(_CLICK)
            if spec is None:
                raise TypeError(f"{record.__name__}.{fld.name} is not declared as an option, argument or group")
            decorators += list(spec) if isinstance(spec, tuple) else [spec(fld.name)]
        wrapped: Callable[..., R] = command
        for d in reversed(decorators):  # click lists parameters in the order they are written
            wrapped = d(wrapped)
        return wrapped

    return deco
