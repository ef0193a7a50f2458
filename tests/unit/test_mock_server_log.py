"""The mock LLM server's request log (core.llm.mock_server), read without a server."""

from __future__ import annotations

from core.llm.mock_server import MockServerConfig, _State


def test_the_log_is_in_the_order_the_requests_came_whatever_order_they_logged_in() -> None:
    """A handler logs its request after answering it: on a busy machine the first request's
    handler can log after the second's. The log reads in arrival order all the same."""
    state = _State(MockServerConfig())
    for n, fault in ((2, "500"), (3, None), (1, "429")):  # logged as handlers finished
        state.log.append({"n": n, "fault": fault})
    assert [e["fault"] for e in state.finished_log(wait_s=0)] == ["429", "500", None]
