"""Where the CPU of the TUI's open goes, thread by thread (``bench/tui_app.py --phases``).

The open's figure ("replayed and painted ÷ ``load_session``") is wall-clock time, and on a quiet
machine nearly all of it is CPU time of one thread or another (they share one interpreter). This
splits that CPU time: the loader's thread (the first part, the whole file, what it works out
beside it), the replay's thread, and the interface thread before, during and after the read of
the whole file; with the page faults of the read, the frames and progress reports drawn while it
ran, and the collector's passes; the loader's waits during the read (its voluntary context
switches: mostly for the interpreter the interface thread holds) and the interface thread's
wake-ups; and the same read once more in the same process after the app has closed, alone (what
the interface's company costs the read, apart from what the process does). It wraps the
functions the app calls by name (in the benchmark's child process only, and only with
``--phases``): nothing it does runs otherwise.
"""

from __future__ import annotations

import gc
import resource
import threading
import time
from collections.abc import Callable
from typing import Any


def _main_cpu() -> float:
    """The interface (main) thread's CPU time, read from any thread (0.0 where unknown)."""
    ident = threading.main_thread().ident
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(ident or 0))
    except (AttributeError, OSError):
        return 0.0


def _switches(task: str = "thread-self") -> int:
    """Voluntary context switches of a thread so far (``task``: ``thread-self``, or
    ``self/task/<native id>``; 0 where unknown). A thread of a busy interpreter switches
    voluntarily when it waits for the interpreter another thread holds (or for the disk); an
    idle interface thread, each time it wakes up."""
    try:
        with open(f"/proc/{task}/status") as f:
            for line in f:
                if line.startswith("voluntary_ctxt_switches:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _main_switches() -> int:
    """The interface (main) thread's voluntary context switches, read from any thread."""
    return _switches(f"self/task/{threading.main_thread().native_id}")


def _faults() -> int:
    """Minor page faults of the calling thread so far (0 where unknown)."""
    try:
        return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    except (AttributeError, OSError, ValueError):
        return 0


class Phases:
    """Hooks counting the CPU of each step of an open, and the figures they make."""

    def __init__(self) -> None:
        self.cpu: dict[str, float] = {}
        """Thread CPU seconds per step (``head``, ``load``, ``prepare``, ``replay``)."""
        self.main_at: dict[str, float] = {}
        """The interface thread's CPU time at ``load start`` and ``load end``."""
        self.wall_at: dict[str, float] = {}
        self.faults: dict[str, int] = {}
        self.switches: dict[str, int] = {}
        """Voluntary context switches during the whole read: the loader's (``load``) and the
        interface thread's (``ui``)."""
        self.alone: dict[str, float] = {}
        """``load_session`` of the same file once more in this process, in a thread of its
        own with nothing beside it (:meth:`load_alone`): ``wall`` and ``cpu``."""
        self.progress_reports = 0
        self.collections = 0
        self.collect_cpu = 0.0
        self._collect_started = 0.0

    def install(self) -> None:
        """Wrap the loader's, the preparation's and the replay's entry points; count the
        collector's passes."""
        from core.replay.engine import Replayer
        from tui.screens.session import loading
        from tui.screens.session.worker_messages import LoadProgressed

        self._wrap(loading, "load_session_head", "head")
        self._wrap(loading, "load_session", "load", edges=True)
        self._wrap(loading, "prepare", "prepare")
        self._wrap(Replayer, "run", "replay")
        progressed = loading.SessionLoader.load_progressed

        def load_progressed(loader: loading.SessionLoader, event: LoadProgressed) -> None:
            self.progress_reports += 1
            progressed(loader, event)

        loading.SessionLoader.load_progressed = load_progressed  # type: ignore[method-assign,assignment]
        gc.callbacks.append(self._collected)

    def _wrap(self, owner: Any, name: str, step: str, *, edges: bool = False) -> None:
        original: Callable[..., Any] = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            if edges:
                self.main_at[f"{step} start"] = _main_cpu()
                self.wall_at[f"{step} start"] = time.perf_counter()
                waits, wakes = _switches(), _main_switches()
            faults = _faults()
            started = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                self.cpu[step] = self.cpu.get(step, 0.0) + time.thread_time() - started
                self.faults[step] = self.faults.get(step, 0) + _faults() - faults
                if edges:
                    self.main_at[f"{step} end"] = _main_cpu()
                    self.wall_at[f"{step} end"] = time.perf_counter()
                    self.switches[step] = _switches() - waits
                    self.switches["ui"] = _main_switches() - wakes

        setattr(owner, name, timed)

    def load_alone(self, path: str) -> None:
        """Read ``path`` once more with ``load_session``, in a thread as the app's loader does,
        after the app has closed: the same process (its imports, its heap, the collector as the
        app left it) with no interface thread beside it. Against the read in the app's worker,
        it tells what the interface's company costs the read from what the process does."""
        from core.formats import load_session

        def read() -> None:
            started, cpu = time.perf_counter(), time.thread_time()
            load_session(path)
            self.alone = {"wall": time.perf_counter() - started, "cpu": time.thread_time() - cpu}

        reader = threading.Thread(target=read, name="ctxscope-load-alone")
        reader.start()
        reader.join()

    def _collected(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._collect_started = time.thread_time()
        else:
            self.collections += 1
            self.collect_cpu += time.thread_time() - self._collect_started

    def figures(
        self,
        frames: list[tuple[float, bool]],
        ui_cpu: Callable[[float], float],
        ui_cpu0: float,
        t_whole: float,
        t_replayed: float,
    ) -> dict[str, float]:
        """The figures, with the frames the benchmark's clock saw (``ui_cpu``: the interface
        thread's CPU at a frame's time, ``ui_cpu0`` at the start; ``t_whole``, ``t_replayed``:
        the frames showing every message, and the replay's result)."""
        start = self.wall_at.get("load start", 0.0)
        end = self.wall_at.get("load end", 0.0)
        during = [t for t, _shown in frames if start <= t <= end]
        main_start = self.main_at.get("load start", 0.0)
        main_end = self.main_at.get("load end", 0.0)
        return {
            "phase_head_cpu": self.cpu.get("head", 0.0),
            "phase_load_cpu": self.cpu.get("load", 0.0),
            "phase_load_faults": float(self.faults.get("load", 0)),
            "phase_prepare_cpu": self.cpu.get("prepare", 0.0),
            "phase_replay_cpu": self.cpu.get("replay", 0.0),
            "phase_ui_before_load": main_start - ui_cpu0,
            "phase_ui_during_load": main_end - main_start,
            "phase_ui_to_whole": ui_cpu(t_whole) - main_end,
            "phase_ui_to_replayed": ui_cpu(t_replayed) - ui_cpu(t_whole),
            "phase_frames_during_load": float(len(during)),
            "phase_progress_reports": float(self.progress_reports),
            "phase_collections": float(self.collections),
            "phase_collect_cpu": self.collect_cpu,
            "phase_load_waits": float(self.switches.get("load", 0)),
            "phase_ui_wakes": float(self.switches.get("ui", 0)),
        } | (
            {"phase_alone_wall": self.alone["wall"], "phase_alone_cpu": self.alone["cpu"]}
            if self.alone
            else {}
        )


PHASE_ROWS = (
    ("loader: first part read", "phase_head_cpu", "s"),
    ("loader: whole file read (load_session)", "phase_load_cpu", "s"),
    ("loader: page faults of that read", "phase_load_faults", "n"),
    ("loader: waits during that read (switches)", "phase_load_waits", "n"),
    ("the same read alone in this process: wall", "phase_alone_wall", "wall"),
    ("... and its CPU", "phase_alone_cpu", "s"),
    ("loader: table, series, calls placed", "phase_prepare_cpu", "s"),
    ("replay thread: Replayer.run", "phase_replay_cpu", "s"),
    ("interface: until the whole read starts", "phase_ui_before_load", "s"),
    ("interface: during the whole read", "phase_ui_during_load", "s"),
    ("interface: wake-ups during the whole read", "phase_ui_wakes", "n"),
    ("interface: read's end to whole frame", "phase_ui_to_whole", "s"),
    ("interface: whole frame to replayed", "phase_ui_to_replayed", "s"),
    ("frames during the whole read", "phase_frames_during_load", "n"),
    ("progress reports handled", "phase_progress_reports", "n"),
    ("collector passes (their CPU)", "phase_collections", "gc"),
)
"""The rows ``--phases`` prints under an open: label, figure, kind."""


def phase_rows(figures: dict[str, float]) -> list[tuple[str, str]]:
    """(label, value) of each phase figure present in ``figures`` (none without ``--phases``)."""
    rows = []
    for label, key, kind in PHASE_ROWS:
        if key not in figures:
            continue
        value = figures[key]
        if kind == "s":
            text = f"{value:.3f} s CPU"
        elif kind == "wall":
            text = f"{value:.3f} s"
        elif kind == "gc":
            text = f"{value:.0f} ({figures.get('phase_collect_cpu', 0.0) * 1000:.1f} ms)"
        else:
            text = f"{value:,.0f}"
        rows.append((label, text))
    return rows
