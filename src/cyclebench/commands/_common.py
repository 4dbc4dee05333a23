"""What every command shares: the two consoles (stdout for results, stderr for the rest),
the one-line user error (exit 2), parameter lists and opening the database."""

from __future__ import annotations

import os
import sys
from typing import Any

import click
from rich.console import Console

from cyclebench.model import FAILED_STATUSES
from cyclebench.store import Store, StoreError

__all__ = ["FAILED_STATUSES", "UserError", "err", "null_context", "open_store", "out", "parse_params"]


def _width(stream: Any) -> int | None:
    """Terminal width on a terminal; wide when piped, so notes are not folded away."""
    if "COLUMNS" in os.environ or stream.isatty():
        return None
    return 200


out = Console(width=_width(sys.stdout))
err = Console(stderr=True, width=_width(sys.stderr))


class UserError(click.ClickException):
    """One line on stderr, exit 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        err.print(f"[bold red]cyclebench: error:[/] {self.message}", highlight=False, soft_wrap=True)


def parse_params(values: tuple[str, ...]) -> list[int]:
    out_: list[int] = []
    for v in values:
        for part in v.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out_.append(int(part, 0))
            except ValueError:
                raise click.BadParameter(f"'{part}' is not an integer", param_hint="-p/--param") from None
    return out_


def open_store(db: str | None) -> Store:
    try:
        return Store(db)
    except StoreError as e:
        raise UserError(str(e)) from None


class null_context:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *a: object) -> None:
        return None
