"""What `fleet run` sends to every host — the cyclebench command checked on the controller
(parsed by the very command it names), refused where it cannot mean the same on every host,
the user's C files mapped to copies in the job's directory, the job's label — and what it
makes of each host's outcome (``land``)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click

from cyclebench.commands._common import UserError, root_command
from cyclebench.commands._fleet_ansible import HostState
from cyclebench.commands._options import expand_files, take_c_files
from cyclebench.commands.fleet_agent import AGENT_JSON
from cyclebench.store import Store
from cyclebench.store import fleet as jobs
from cyclebench.store import runfile as run_file

# Commands that measure and store a run on the host they run on.
MEASURING = ("run", "compare", "scale", "variants", "stat", "selftest", "counters", "check", "annotate")
WHY_NOT = {
    "show": "takes a run id", "export": "takes a run id", "delete": "takes run ids", "import": "reads a local file",
    "runs": "reads the database", "history": "reads the database: run it on the controller over --db",
    "fleet": "is the fleet itself", "cache": "manages one machine's cache", "gen": "writes local files",
}
FILE_OPTS = ("-f", "--file")


@dataclass
class Plan:
    """The argv run on every host (after `cyclebench`) and the files to copy there:
    (controller path, path relative to the job's directory)."""

    args: list[str]
    files: list[tuple[Path, str]] = field(default_factory=list)


def _command(args: list[str]) -> click.Command:
    if not args:
        raise click.UsageError("give the command to run on every host after --, e.g. -- run -b 'syscall/*'")
    name = args[0]
    if name in WHY_NOT:
        raise click.UsageError(f"'{name}' {WHY_NOT[name]}; ids and files differ per host, so a fleet does not run it")
    cmd = root_command(name)
    if cmd is None or name not in MEASURING:
        raise click.UsageError(f"no command '{name}' to run on a fleet (one of: {', '.join(MEASURING)})")
    return cmd


def _dest(src: Path, taken: dict[str, Path]) -> str:
    rel = src.name  # in the job's directory itself (copy does not create a file's parent directories)
    if taken.setdefault(rel, src) != src:
        raise click.UsageError(f"two files named {src.name} ({taken[rel]}, {src}): a host gets them in one directory")
    return rel


def plan(args: list[str], job_label: str | None = None) -> Plan:
    """Check ``args`` (a cyclebench command line) for a fleet and map its C files (``-f``,
    ``--file``, positional files of run/variants, ``-I`` directories) to job-relative paths;
    the headers beside each C file go along. ``job_label`` (KEY=VALUE) is added as --label
    when the command takes labels. click.UsageError for what cannot run on every host alike."""
    cmd = _command(args)
    try:
        ctx = cmd.make_context(args[0], list(args[1:]), resilient_parsing=False)
    except click.ClickException as e:
        raise click.UsageError(f"-- {args[0]}: {e.format_message()}") from None
    params = ctx.params
    if params.get("db"):
        raise click.UsageError("the fleet decides where runs go: give --db (and --direct) to `fleet run`, not the "
                               "command")
    written = [opt for key, opt in (("json_path", "--json"), ("output_path", "-o"), ("plot_path", "--plot"),
                                    ("csv_path", "--csv")) if params.get(key)]
    if written:
        raise click.UsageError(f"{'/'.join(written)}: files written on the hosts do not come back; the runs do — "
                               "export, plot or compare them on the controller")
    targets = [str(t) for t in params.get("targets") or ()]
    if args[0] == "compare" and targets and all(t.replace(",", "").isdigit() or t[:1] == "g" for t in targets):
        raise click.UsageError("compare of stored runs takes run ids, which differ per host: run `compare --by host` "
                               "on the controller")
    positional = {str(p) for p in params.get("files") or ()} | {  # and FILE.c where benchmarks go (build_options)
        t for key in ("targets", "benches", "bench") if isinstance(params.get(key), tuple)
        for t in take_c_files(params[key])[0]}
    taken: dict[str, Path] = {}
    out = Plan([args[0]])
    copied: set[Path] = set()

    def add(src: Path) -> str:
        rel = _dest(src, taken)
        if src not in copied:
            copied.add(src)
            out.files.append((src, rel))
            for h in sorted(src.parent.glob("*.h")):  # #include "x.h" beside the file
                if h.resolve() not in copied:
                    copied.add(h.resolve())
                    out.files.append((h.resolve(), _dest(h.resolve(), taken)))
        return rel

    rest = iter(args[1:])
    for tok in rest:
        if tok == "--":
            out.args += [tok, *rest]
            break
        value = None
        if tok in FILE_OPTS:
            value = next(rest, "")
        elif tok.startswith("--file="):
            value = tok.split("=", 1)[1]
        elif tok.startswith("-f") and len(tok) > 2 and not tok.startswith("--"):
            value = tok[2:]
        if value is not None:
            for src in expand_files([value]):
                out.args += ["-f", add(src)]
        elif tok in positional:
            out.args += [add(src) for src in expand_files([tok])]
        elif tok == "-I" or tok.startswith("-I"):
            d = Path(next(rest, "") if tok == "-I" else tok[2:]).resolve()
            if not d.is_dir():
                raise click.UsageError(f"-I {d}: no such directory")
            rel = f"inc{sum(1 for f in out.files if f[1].startswith('inc'))}"
            out.files.append((d, rel + "/"))
            out.args += ["-I", rel]
        else:
            out.args.append(tok)
    if job_label and any("--label" in getattr(p, "opts", ()) for p in cmd.params):
        out.args += ["--label", job_label]
    return out


def land(store: Store, job_id: int, host: str, hs: HostState, fetched: Path, direct: bool,
         canceled: bool) -> dict[str, Any]:
    """One host's row: its runs imported from the fetched bundles (or, --direct, already in
    the database), its outcome recorded in fleet_hosts."""
    agent_file = fetched / host / AGENT_JSON
    agent = json.loads(agent_file.read_text()) if agent_file.is_file() else None
    status, reason, run_ids = hs.status, hs.reason, []
    if agent is not None:
        if direct:
            run_ids = [int(i) for i in agent.get("runs") or []]
        for name in agent.get("bundles") or []:
            try:
                run_ids.append(run_file.import_run(store, run_file.load(fetched / host / name)))
            except (run_file.ExportError, OSError) as e:
                status, reason = "failed", f"{name}: {e}"
        if agent.get("fatal"):
            status = "busy" if str(agent["fatal"]).startswith("busy") else "check failed"
            reason = agent["fatal"]
        elif agent.get("returncode") not in (0, None) and status is None:
            status, reason = "failed", f"exit {agent['returncode']}: {agent.get('stderr_tail') or ''}".strip()
    if status is None:
        status, reason = ("ok", None) if agent is not None else ("interrupted" if canceled else "failed",
                                                                  reason or f"stopped in task '{hs.task}'")
    elif status == "failed" and canceled and agent is None:
        status = "interrupted"
    row = {"host": host, "status": status, "reason": reason, "check": agent.get("check") if agent else None,
           "run_ids": run_ids, "machine": agent.get("machine") if agent else None,
           "results": sum(len(store.results(i)) for i in run_ids)}
    jobs.record_host(store, job_id, host, status, reason, row["check"], run_ids, row["machine"])
    return row


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


def _parse_file(path: Path, loader: Any) -> str | None:
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
    """The host names of an Ansible inventory (ansible-core's InventoryManager reads every
    format). UserError, in one line with the parser's reason, for a file no plugin can read:
    Ansible itself only warns and goes on without its hosts."""
    try:
        from ansible.inventory.manager import IGNORED, InventoryManager
        from ansible.parsing.dataloader import DataLoader
    except ImportError:
        raise UserError("reading an inventory needs ansible-core: pip install 'cyclebench[fleet]'") from None
    loader = DataLoader()
    files = ([inventory] if not inventory.is_dir() else
             [p for p in sorted(inventory.rglob("*")) if p.is_file() and not any(
                 IGNORED.search(part.encode()) for part in p.relative_to(inventory).parts)])
    for f in files:
        why = _parse_file(f.resolve(), loader)
        if why is not None:
            raise UserError(f"cannot parse the inventory {f}: {why}")
    return sorted(h.name for h in InventoryManager(loader=loader, sources=[str(inventory)]).get_hosts())
