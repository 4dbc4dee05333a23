"""An Ansible inventory's hosts, read as ansible-core reads it — or refused in one line with the
parser's reason, where Ansible alone would warn and go on with no host (docs/fleet.md)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from cyclebench.experiments.errors import ExperimentError

if TYPE_CHECKING:
    from ansible.parsing.dataloader import DataLoader


def _reason(ex: BaseException) -> str:
    """The parser's own words and, where its error carries one, the line (ansible-core tags
    errors with an origin ``path:line[:column]``)."""
    text = " ".join(str(getattr(ex, "message", None) or ex).split())
    e: BaseException | None = ex
    while e is not None:
        m = re.search(r":(\d+)(?::(\d+))?$", str(getattr(e, "obj", None) or ""))
        if m:
            return f"line {m[1]}: {text}"
        e = e.__cause__ or e.__context__
    return text


def _parse_file(path: Path, loader: DataLoader) -> str | None:
    """None when one of Ansible's enabled inventory plugins reads ``path``, else why not: the
    failure of the plugin its extension names (ini for any other), trying them as ansible-core's
    InventoryManager.parse_source does (which only warns when all fail)."""
    from ansible import constants
    from ansible.inventory.data import InventoryData
    from ansible.plugins.loader import inventory_loader

    failures: dict[str, BaseException] = {}
    for plugin in filter(None, (inventory_loader.get(name) for name in constants.INVENTORY_ENABLED)):
        try:
            wants = bool(plugin.verify_file(str(path)))
        except Exception:
            wants = False
        if not wants:
            continue
        try:
            plugin.parse(InventoryData(), loader, str(path), cache=False)
            return None
        except Exception as ex:  # ansible raises AnsibleParserError and, from some plugins, anything
            failures[str(getattr(plugin, "NAME", ""))] = ex
    if not failures:
        return "no inventory plugin of Ansible's reads it (ini, YAML, TOML, or an executable script)"
    ext = path.suffix.lower()
    name = "yaml" if ext in (".yml", ".yaml", ".json") else "toml" if ext == ".toml" else "ini"
    return _reason(failures.get(name) or next(iter(failures.values())))


def inventory_hosts(inventory: Path) -> list[str]:
    """The host names of an Ansible inventory (a file or a directory of them), sorted
    (ansible-core's InventoryManager reads every format). ExperimentError, in one line with the
    parser's reason, for a file no plugin can read, or without ansible-core."""
    try:
        from ansible.inventory.manager import IGNORED, InventoryManager
        from ansible.parsing.dataloader import DataLoader
    except ImportError:
        raise ExperimentError("reading an inventory needs ansible-core: pip install 'cyclebench[fleet]'") from None
    loader = DataLoader()
    files = ([inventory] if not inventory.is_dir() else
             [p for p in sorted(inventory.rglob("*")) if p.is_file() and not any(
                 IGNORED.search(part.encode()) for part in p.relative_to(inventory).parts)])
    for f in files:
        why = _parse_file(f.resolve(), loader)
        if why is not None:
            raise ExperimentError(f"cannot parse the inventory {f}: {why}")
    return sorted(h.name for h in InventoryManager(loader=loader, sources=[str(inventory)]).get_hosts())
