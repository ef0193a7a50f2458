"""The TUI's process keeps one malloc arena where glibc lets it, and gives the free pages of its C heap
back after each big step (tui.malloc_arenas)."""

from __future__ import annotations

import platform
import sys

import pytest

from tui.malloc_arenas import M_ARENA_MAX, limit_malloc_arenas, release_free_memory


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []
        self.trims: list[int] = []

    def mallopt(self, param: int, value: int) -> int:
        self.calls.append((param, value))
        return 1

    def malloc_trim(self, pad: int) -> int:
        self.trims.append(pad)
        return 1


def test_glibc_is_asked_for_one_arena(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _Libc()
    monkeypatch.setattr("ctypes.CDLL", lambda _name: libc)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is True
    assert libc.calls == [(M_ARENA_MAX, 1)]


def test_an_arena_count_in_the_environment_is_left_as_it_is(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    libc = _Libc()
    monkeypatch.setattr("ctypes.CDLL", lambda _name: libc)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    assert limit_malloc_arenas() is False
    assert libc.calls == []


def test_nothing_is_done_off_linux(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _Libc()
    monkeypatch.setattr("ctypes.CDLL", lambda _name: libc)
    monkeypatch.setattr(sys, "platform", "darwin")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is False
    assert release_free_memory() is False
    assert libc.calls == [] and libc.trims == []


def test_a_libc_without_mallopt_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ctypes.CDLL", lambda _name: object())
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas() is False


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc only",
)
def test_the_real_glibc_agrees(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)
    assert limit_malloc_arenas(8) is True  # (the default's order: this process is not changed)


def test_the_free_pages_of_the_heap_are_given_back(monkeypatch: pytest.MonkeyPatch) -> None:
    libc = _Libc()
    monkeypatch.setattr("ctypes.CDLL", lambda _name: libc)
    monkeypatch.setattr(sys, "platform", "linux")
    assert release_free_memory() is True
    assert libc.trims == [0]  # (no padding kept at the top of the heap)


def test_a_libc_without_malloc_trim_is_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("ctypes.CDLL", lambda _name: object())
    monkeypatch.setattr(sys, "platform", "linux")
    assert release_free_memory() is False


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc only",
)
def test_the_real_glibc_trims() -> None:
    release_free_memory()  # (True or False: whether pages were free; never an error)
