"""PMU-specific event names through libpfm4 (ctypes; the library is optional).

`encode(name)` asks ``pfm_get_os_event_encoding(name, PFM_PLM0|PFM_PLM3,
PFM_OS_PERF_EVENT_EXT, ...)`` for the perf_event_attr of any event libpfm4 knows for the
PMUs it detects here (e.g. ``INST_RETIRED:ANY_P``, ``ICACHE_64B:IFTAG_MISS``); `events()`
lists them per PMU (libpfm4's pfm_get_pmu_info / pfm_get_event_info, as its showevtinfo
does). Detection is by CPUID: a VM without a virtual PMU still gets names and encodings,
and opening them then fails — which `cyclebench counters list` shows by trying.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

from cyclebench.counters.event import Event

PFM_SUCCESS = 0
PFM_OS_PERF_EVENT_EXT = 2
PFM_PLM0, PFM_PLM3 = 0x01, 0x08  # kernel and user privilege levels
PFM_PMU_MAX = 1024  # larger than any libpfm4 pfm_pmu_t value so far


class _EncodeArg(ctypes.Structure):  # pfm_perf_encode_arg_t
    _fields_ = [("attr", ctypes.c_void_p), ("fstr", ctypes.c_void_p), ("size", ctypes.c_size_t),
                ("idx", ctypes.c_int), ("cpu", ctypes.c_int), ("flags", ctypes.c_int), ("pad0", ctypes.c_int)]


class _PmuInfo(ctypes.Structure):  # pfm_pmu_info_t
    _fields_ = [("name", ctypes.c_char_p), ("desc", ctypes.c_char_p), ("size", ctypes.c_size_t),
                ("pmu", ctypes.c_int), ("type", ctypes.c_int), ("nevents", ctypes.c_int),
                ("first_event", ctypes.c_int), ("max_encoding", ctypes.c_int), ("num_cntrs", ctypes.c_int),
                ("num_fixed_cntrs", ctypes.c_int), ("flags", ctypes.c_uint), ("reserved", ctypes.c_uint * 7)]


class _EventInfo(ctypes.Structure):  # pfm_event_info_t
    _fields_ = [("name", ctypes.c_char_p), ("desc", ctypes.c_char_p), ("equiv", ctypes.c_char_p),
                ("size", ctypes.c_size_t), ("code", ctypes.c_uint64), ("pmu", ctypes.c_int),
                ("dtype", ctypes.c_int), ("idx", ctypes.c_int), ("nattrs", ctypes.c_int),
                ("reserved", ctypes.c_int * 2), ("flags", ctypes.c_uint), ("reserved2", ctypes.c_uint * 7)]


@cache
def _lib() -> ctypes.CDLL | None:
    path = ctypes.util.find_library("pfm")
    if not path:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        return None
    if lib.pfm_initialize() != PFM_SUCCESS:
        return None
    lib.pfm_get_os_event_encoding.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p]
    lib.pfm_get_pmu_info.argtypes = [ctypes.c_int, ctypes.POINTER(_PmuInfo)]
    lib.pfm_get_event_info.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_EventInfo)]
    lib.pfm_get_event_next.argtypes = [ctypes.c_int]
    return lib


def available() -> bool:
    """libpfm4 is installed and initialised."""
    return _lib() is not None


def encode(name: str) -> Event | None:
    """perf_event_attr (type, config, config1, config2) of a libpfm4 event name, or None."""
    lib = _lib()
    if lib is None:
        return None
    attr = (ctypes.c_uint8 * 256)()  # perf_event_attr, larger than any version of it
    arg = _EncodeArg(ctypes.cast(attr, ctypes.c_void_p), None, ctypes.sizeof(_EncodeArg), 0, 0, 0, 0)
    if lib.pfm_get_os_event_encoding(name.encode(), PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT,
                                     ctypes.byref(arg)) != PFM_SUCCESS:
        return None
    raw = bytes(attr)
    u32 = lambda o: int.from_bytes(raw[o : o + 4], "little")  # noqa: E731
    u64 = lambda o: int.from_bytes(raw[o : o + 8], "little")  # noqa: E731
    # perf_event_attr: type @0, config @8, config1 @56, config2 @64 (linux/perf_event.h)
    return Event(name, u32(0), u64(8), u64(56), u64(64))


def events() -> dict[str, list[tuple[str, str]]]:
    """PMU name → [(event name, description)] for every PMU libpfm4 detects here."""
    lib = _lib()
    if lib is None:
        return {}
    out: dict[str, list[tuple[str, str]]] = {}
    for pmu in range(PFM_PMU_MAX):
        pinfo = _PmuInfo()
        pinfo.size = ctypes.sizeof(_PmuInfo)
        if lib.pfm_get_pmu_info(pmu, ctypes.byref(pinfo)) != PFM_SUCCESS or not (pinfo.flags & 1):
            continue  # flags bit 0: is_present
        name = (pinfo.name or b"?").decode()
        evs = []
        idx = pinfo.first_event
        while idx != -1:
            einfo = _EventInfo()
            einfo.size = ctypes.sizeof(_EventInfo)
            if lib.pfm_get_event_info(idx, PFM_OS_PERF_EVENT_EXT, ctypes.byref(einfo)) == PFM_SUCCESS:
                evs.append(((einfo.name or b"").decode(), (einfo.desc or b"").decode()))
            idx = lib.pfm_get_event_next(idx)
        out[name] = evs
    return out
