"""Compile and cache runner binaries (compile), toolchains for other targets, ELF sizes and
disassembly (elf), generated workloads (icache). Imports nothing of the other rooms."""

from cyclebench.build.compile import (
    DEFAULT_CFLAGS,
    Binary,
    BuildError,
    BuildSpec,
    ToolMissing,
    build,
    cache_root,
    compiler_version,
    cross_cc,
    engine_dir,
    kill_compilers,
    launcher_for,
    objdump_for,
    suite_sources,
)

__all__ = ["DEFAULT_CFLAGS", "Binary", "BuildError", "BuildSpec", "ToolMissing", "build", "cache_root",
           "compiler_version", "cross_cc", "engine_dir", "kill_compilers",
           "launcher_for", "objdump_for", "suite_sources"]
