"""Records of a static model's prediction that cross rooms: the hot loop found in a built
runner (predict/hotloop), what each model made of it (predict/mca, predict/osaca), and the
prediction of one benchmark (predict → experiments/predict → store/predictions, report/predict).
docs/method.md §12 says how each is made.

Imports nothing of the project (import-linter checks it), like model.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

# The models (the ``tool`` of a ModelResult), in the order they are shown.
MCA, OSACA = "llvm-mca", "OSACA"
TOOLS = (MCA, OSACA)
# Where a model's figure is missing, why: the tool is not installed (reason names the package),
# it knows no model of this CPU, the body has no loop, or the tool failed (reason: its message).
OK, MISSING, UNSUPPORTED, NO_LOOP, FAILED = "ok", "missing", "unsupported", "no loop", "failed"
# ... or (rows stored before OSACA priced blocks too) the model read one loop kernel and the op's
# code was priced block by block (predict.blocks): shown "n/a: blocks"
BLOCKWISE = "blockwise"
# Where the hot loop came from: callgrind's exact per-instruction counts, or the body's innermost
# backward branch read from the disassembly (no valgrind here).
CALLGRIND, STATIC = "callgrind", "static"


@dataclass(frozen=True)
class LoopInstruction:
    """One instruction of the hot loop: its address in ``HotLoop.obj``, its AT&T text as objdump
    prints it (comments dropped), how many times it runs per loop trip (1.0 on the loop's
    straight path; None without callgrind), and why the models cannot price it (None: they can)."""

    address: int
    text: str
    per_trip: float | None = None
    unmodelled: str | None = None


@dataclass(frozen=True)
class HotLoop:
    """The loop an op spends its instructions in.

    ``function``/``obj``: where it is (a symbol, the ELF file); ``start``/``end``: the addresses of
    its first instruction and of its backward branch; ``trips_per_op``: loop trips per operation
    (exact from callgrind; None when read statically, where 1 is assumed); ``ir_per_op``: every
    instruction the op executes (callgrind; None statically) and ``loop_ir_per_op`` those in the
    loop's trips; ``outside``: what the op executes that the loop's models do not see and cannot
    price (``"syscall in syscall (libc.so.6), 1/op"``, ``"call memcpy"``).
    """

    function: str
    obj: str
    start: int
    end: int
    instructions: tuple[LoopInstruction, ...]
    source: str
    trips_per_op: float | None = None
    ir_per_op: float | None = None
    loop_ir_per_op: float | None = None
    outside: tuple[str, ...] = ()
    priced_ir_per_op: float | None = None

    @property
    def trips(self) -> float:
        """Trips per op the prediction is multiplied by (1 when unknown)."""
        return self.trips_per_op if self.trips_per_op is not None else 1.0

    @property
    def unmodelled(self) -> tuple[str, ...]:
        """What the models do not model, named: the loop's own instructions, then what it reaches."""
        own = tuple(dict.fromkeys(i.unmodelled for i in self.instructions if i.unmodelled))
        return own + tuple(x for x in self.outside if x not in own)

    def assembly(self) -> str:
        """The loop's instructions, one a line, for display."""
        return "\n".join(i.text for i in self.instructions)


@dataclass(frozen=True)
class Block:
    """One basic block an op executes (callgrind's per-op counts split at branch targets and after
    branches, calls and returns): where it is (``function``, ``obj``, ``start`` and ``end``: the
    addresses of its first and last instruction, ``line``: its source file:line when the build has
    debug information), ``count``: executions per op, ``ir``: the instructions it executes per op
    (a rep string op counts each iteration, as callgrind does), its AT&T ``instructions``, what the
    models do not model in it (``unmodelled``, classes), and llvm-mca's ``cycles`` per execution
    (the block repeated: its own dependency chains included) and ``throughput`` bound per
    execution (None: not priced, ``reason`` says why)."""

    function: str
    obj: str
    start: int
    end: int
    count: float
    ir: float
    instructions: tuple[str, ...]
    unmodelled: tuple[str, ...] = ()
    addresses: tuple[int, ...] = ()
    line: str | None = None
    cycles: float | None = None
    throughput: float | None = None
    reason: str | None = None
    kind: str = "block"  # or "loop": an innermost loop's main path, ``count`` its trips per op

    @property
    def per_op(self) -> float | None:
        """Predicted cycles per op: executions × cycles per execution (None: not priced)."""
        return None if self.cycles is None else self.count * self.cycles


@dataclass(frozen=True)
class NotModelled:
    """An instruction the models do not model that the op executes: its class (hotloop's
    ``why_unmodelled``), text, function, executions per op and its share of the op's instructions
    (callgrind's Ir: a ``rep stos`` counts its iterations)."""

    what: str
    text: str
    function: str
    count: float
    share: float


@dataclass(frozen=True)
class BlockProfile:
    """Block-weighted pricing of one op (docs/method.md §12): every block it executes with its
    count and llvm-mca's cost, ``ir_per_op`` every instruction it executes, ``coverage`` the share
    of those in priced blocks (a call is priced through its callee's blocks, not as a block of its
    own), ``not_modelled`` what runs per op that no model prices, ``cycles_per_op`` Σ count ×
    cycles and ``throughput_per_op`` Σ count × throughput bound over the priced blocks;
    ``events``: callgrind's simulated events per op (its cache misses and branch mispredictions:
    what a throughput model does not price); ``unpriced``: the blocks this tool could price in
    principle but did not (OSACA without data for an instruction of them), as (function, share of
    the op's instructions, why), most first. That share counts what ``coverage`` would have counted
    had the block been priced — not the instructions no model prices (a rep string op's), which are
    outside every tool's coverage already — so ``coverage`` + Σ unpriced shares of OSACA's profile is
    llvm-mca's ``coverage`` over the same blocks."""

    blocks: tuple[Block, ...]
    ir_per_op: float
    coverage: float
    not_modelled: tuple[NotModelled, ...] = ()
    cycles_per_op: float | None = None
    throughput_per_op: float | None = None
    events: tuple[tuple[str, float], ...] = ()  # callgrind's events per op: (name, count), Ir, Bcm, D1mr, …
    unpriced: tuple[tuple[str, float, str], ...] = ()

    @property
    def unpriced_share(self) -> float:
        """The share of the op's instructions in blocks this tool left unpriced (``unpriced``)."""
        return sum(s for _f, s, _t in self.unpriced)

    def ranked(self) -> list[Block]:
        """The blocks by predicted cycles per op, most first (unpriced ones last, by Ir)."""
        return sorted(self.blocks, key=lambda b: (b.per_op is None, -(b.per_op or 0.0), -b.ir))


@dataclass(frozen=True)
class InstructionView:
    """A model's view of one loop instruction: port (resource) pressure in cycles per trip,
    its latency, and whether it is on the model's critical or loop-carried chain."""

    text: str
    ports: tuple[tuple[str, float], ...] = ()
    latency: float | None = None
    on_chain: bool = False


@dataclass(frozen=True)
class ModelResult:
    """What one tool predicted for one loop, in cycles per loop trip.

    ``cycles``: the tool's prediction (llvm-mca: simulated cycles per iteration; OSACA:
    max(throughput, loop-carried dependency), as its paper reads a kernel); ``throughput``: the
    port-pressure bound (llvm-mca's Block RThroughput); ``lcd``: the loop-carried dependency
    bound (OSACA's; llvm-mca reports none, its bottleneck analysis's share of data dependencies
    is in ``notes``). ``cpu``: the tool's CPU name used, ``cpu_reason``: why that one.
    ``status``: OK, MISSING, UNSUPPORTED, NO_LOOP, FAILED or BLOCKWISE, ``reason`` saying why.
    ``unpriced``: the loop's instructions the tool has no data for (priced 0 in ``cycles``, so the
    figure is a lower bound), other than those nobody models (HotLoop.unmodelled).
    """

    tool: str
    status: str = OK
    reason: str | None = None
    version: str | None = None
    cpu: str | None = None
    cpu_reason: str | None = None
    cycles: float | None = None
    throughput: float | None = None
    lcd: float | None = None
    critical_path: float | None = None
    instructions: tuple[InstructionView, ...] = ()
    notes: tuple[str, ...] = ()
    unpriced: tuple[str, ...] = ()


@dataclass(frozen=True)
class Prediction:
    """Both models' predictions for one benchmark × parameter × variant: the hot loop (None when
    none was found: ``reason`` says why) and one ModelResult per tool, in TOOLS order.
    ``cpu_model``: the CPU's model name (/proc/cpuinfo). Priced block by block: ``blocks``,
    llvm-mca's BlockProfile, and ``osaca_blocks``, OSACA's of the same blocks (None: OSACA did not
    price them; its ModelResult says why)."""

    bench: str
    param: int | None
    variant: str = ""
    cpu_model: str | None = None
    loop: HotLoop | None = None
    models: tuple[ModelResult, ...] = ()
    reason: str | None = None
    blocks: BlockProfile | None = None
    osaca_blocks: BlockProfile | None = None

    def model(self, tool: str) -> ModelResult | None:
        return next((m for m in self.models if m.tool == tool), None)

    def blocks_of(self, tool: str) -> BlockProfile | None:
        """The tool's BlockProfile where the op is priced block by block (None: it is not, or the
        tool did not price its blocks)."""
        return self.blocks if tool == MCA else self.osaca_blocks if tool == OSACA else None

    def coverage_of(self, tool: str) -> float | None:
        """``coverage`` as the tool priced it: block by block, the share of the op's instructions in
        the blocks that tool priced (OSACA leaves out those it has no data for); else ``coverage``."""
        b = self.blocks_of(tool)
        return b.coverage if b is not None else self.coverage

    @property
    def coverage(self) -> float | None:
        """The share of the op's executed instructions the prediction prices (callgrind's Ir): its
        blocks' (llvm-mca's: coverage_of gives each tool's), or its loop's; None without
        callgrind's counts."""
        if self.blocks is not None:
            return self.blocks.coverage
        if self.loop is None or not self.loop.ir_per_op or self.loop.priced_ir_per_op is None:
            return None
        return min(self.loop.priced_ir_per_op / self.loop.ir_per_op, 1.0)

    def cycles_per_op(self, tool: str) -> float | None:
        """The tool's cycles per op: block-weighted (its blocks_of: Σ count × cycles) where the op's
        code is priced block by block, else cycles per loop trip × trips per op; None without a
        figure."""
        m = self.model(tool)
        if self.blocks is not None:  # m.cycles is the top block's, which this tool may not price
            b = self.blocks_of(tool)
            return None if b is None or m is None or m.status != OK else b.cycles_per_op
        if m is None or m.cycles is None:
            return None
        if self.loop is None:
            return None
        return m.cycles * self.loop.trips


class LoopDetail(TypedDict):
    """Where a prediction's loop is (a stored prediction's ``detail["loop"]``; HotLoop): the symbol
    and ELF file, its first and backward-branch addresses, the source it was found from, every
    instruction and the loop's own per operation (callgrind; None when read statically), and its
    assembly as the models read it."""

    function: str
    object: str
    start: int
    end: int
    source: str
    ir_per_op: float | None
    loop_ir_per_op: float | None
    assembly: str


class BlockDetail(TypedDict):
    """One priced block or loop path of a block-weighted prediction (``detail["blocks"]``; Block):
    where, what kind, executions per op, Ir per op, cycles and throughput bound per execution,
    what is not modelled in it, and its instructions."""

    function: str
    object: str
    start: int
    end: int
    line: str | None
    kind: str
    count: float
    ir: float
    cycles: float | None
    throughput: float | None
    unmodelled: list[str]
    instructions: list[str]


class BlockTotals(TypedDict):
    """A block-weighted prediction's totals (``detail["block_totals"]``; BlockProfile): Ir per op,
    coverage, Σ count × cycles and × throughput bound, the not-modelled instructions (what,
    text, function, executions per op, share of the op's Ir) and the blocks the tool left unpriced
    (BlockProfile.unpriced)."""

    ir_per_op: float
    coverage: float
    cycles_per_op: float | None
    throughput_per_op: float | None
    not_modelled: list[tuple[str, str, str, float, float]]
    events: dict[str, float]
    unpriced: list[list[str | float]]  # [function, share, why]; absent in predictions stored before it was


class PredictionDetail(TypedDict, total=False):
    """A stored prediction's ``detail`` JSON (store/predictions.py): why that CPU model, the tool's
    notes, its critical path (cycles per trip), the instructions it had no data for; with a loop,
    where it is, what the models do not model and why this loop (``loop_note``)."""

    cpu_reason: str | None
    notes: list[str]
    critical_path: float | None
    unpriced: list[str]
    loop: LoopDetail
    not_modelled: list[str]
    loop_note: str
    blocks: list[BlockDetail]
    block_totals: BlockTotals


class PredictionRow(TypedDict, total=False):
    """One row of the ``predictions`` table (store/schema.py; the run file's ``predictions``): a
    tool's prediction for a benchmark at a parameter and variant, its status and why, the tool's
    version and CPU name, the CPU's model name, cycles per loop trip (block by block: the top
    block's per execution), loop trips per operation (None: 1 assumed), cycles per operation, the
    port-pressure and loop-carried-dependency bounds per trip, the share of the op's instructions
    the tool priced, the detail (block by block: that tool's blocks and totals), when it was
    stored (ISO 8601; absent before it is)."""

    bench: str
    param: int | None
    variant: str
    tool: str
    status: str
    reason: str | None
    tool_version: str | None
    mcpu: str | None
    cpu_model: str | None
    cycles_per_iter: float | None
    trips_per_op: float | None
    cycles_per_op: float | None
    throughput: float | None
    lcd: float | None
    coverage: float | None
    detail: PredictionDetail
    created_at: str
