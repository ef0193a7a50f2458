"""The scenes only a test can reach: a file still being read, a replay or a summary still running.

Each holds a worker half-way (:mod:`tui_harness`) through ``monkeypatch`` and returns a
:class:`~tools.scenes.Scene` drawn like those of :mod:`tools.scenes`, which holds every state the app
reaches by itself (and that ``make screenshots`` draws too).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from textual.pilot import Pilot

import tui.screens.compaction as compaction_module
from core.llm.protocol import Summarizer
from core.policy import LLMConfig
from tests.support.tui_harness import HeldLoad, HeldReplay, HeldSummarizer, screen_text, until
from tools.scenes import OVERFLOW, Scene, keys, press, session_app


def _share_of_the_sample(share: float, messages: int) -> tuple[int, int, int]:
    """A loader's progress report: ``share`` of the main sample read, ``messages`` so far."""
    size = OVERFLOW.stat().st_size
    return int(size * share), size, messages


def loading(monkeypatch: pytest.MonkeyPatch) -> Scene:
    HeldLoad(monkeypatch, report=_share_of_the_sample(0.4, 80))
    return Scene(
        "loading",
        "reading a file: bytes and messages so far",
        session_app,
        running=("load",),
    )


def loading_first_part(monkeypatch: pytest.MonkeyPatch) -> Scene:
    HeldLoad(monkeypatch, report=_share_of_the_sample(0.6, 120), first_part_bytes=400_000)
    reading = ("load",)
    return Scene(
        "loading-first-part",
        "a big file's first part, usable while the rest is read (the bar as a strip)",
        session_app,
        keys("down", "down", "down", ignore=reading),
        running=reading,
    )


def replaying(monkeypatch: pytest.MonkeyPatch) -> Scene:
    HeldReplay(monkeypatch)
    return Scene(
        "replaying",
        "the replay half-way: the recorded figures meanwhile, x cancels",
        session_app,
        running=("replay",),
    )


def _slow_llm(monkeypatch: pytest.MonkeyPatch) -> None:
    def make_summarizer(config: LLMConfig) -> Summarizer:
        return HeldSummarizer()

    monkeypatch.setattr(compaction_module, "make_summarizer", make_summarizer)


async def _compaction_started(pilot: Pilot[None]) -> None:
    await press(pilot, "G")
    await pilot.press("c")
    await until(pilot, _summary_drawn(pilot), "the first words of the summary drawn")


def _summary_drawn(pilot: Pilot[None]) -> Callable[[], bool]:
    def drawn() -> bool:
        return "fix the parser" in screen_text(pilot.app)

    return drawn


def compaction_running(monkeypatch: pytest.MonkeyPatch) -> Scene:
    _slow_llm(monkeypatch)
    return Scene(
        "compaction-running",
        "c with a slow LLM: the summary as it streams in, x cancels",
        lambda: session_app(OVERFLOW, "seed"),
        _compaction_started,
        running=("compaction",),
    )


async def _compaction_cancelled(pilot: Pilot[None]) -> None:
    await _compaction_started(pilot)
    await press(pilot, "x")


def compaction_cancelled(monkeypatch: pytest.MonkeyPatch) -> Scene:
    _slow_llm(monkeypatch)
    return Scene(
        "compaction-cancelled",
        "x: the compaction cancelled, what had streamed stays",
        lambda: session_app(OVERFLOW, "seed"),
        _compaction_cancelled,
    )
