"""The app's thread workers run in a copy of the context that started them.

Textual runs a thread worker with ``loop.run_in_executor(None, ...)`` and marks it as the
running worker (``active_worker.set``) in the pool thread's *own* context, which the thread
keeps for its whole life: each pool thread held the last worker it ran, and with it that
worker's function and arguments (a widget, and through it its screen, its session and the
replay). A closed session screen stayed in memory until every thread that had worked for it
ran something else. Here each piece of work runs in a copy of the submitting task's context (as
:func:`asyncio.to_thread` does), dropped when the work ends.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class ContextThreadPool(ThreadPoolExecutor):
    """A thread pool that runs each call in a copy of the caller's context."""

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        context = contextvars.copy_context()
        return super().submit(context.run, fn, *args, **kwargs)


def use_context_threads(loop: asyncio.AbstractEventLoop) -> None:
    """Make a :class:`ContextThreadPool` the default executor of ``loop`` (the thread workers')."""
    loop.set_default_executor(ContextThreadPool(thread_name_prefix="asyncio"))
