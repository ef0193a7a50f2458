"""``ctxscope report``: a self-contained HTML page (nothing to fetch, everything escaped) that
holds the session's figures."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from core.formats.ctxscope_jsonl import write_session
from core.model.session import SourceFormat
from tests.support.builders import SessionBuilder
from tests.support.paths import REPO
from tui.cli.main import cli

SAMPLES = REPO / "sample_sessions"
FETCHING_TAGS = {
    "script",
    "link",
    "img",
    "iframe",
    "object",
    "embed",
    "audio",
    "video",
    "source",
    "base",
    "form",
    "input",
    "track",
    "picture",
    "frame",
    "use",
    "image",
}
REFERENCE_ATTRIBUTES = {
    "src",
    "href",
    "xlink:href",
    "action",
    "srcset",
    "poster",
    "data",
    "background",
    "formaction",
}


class Page(HTMLParser):
    """Every tag, attribute and text of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]
        self._in_style = tag == "style"

    def handle_endtag(self, tag: str) -> None:
        self._in_style = False

    def handle_data(self, data: str) -> None:
        (self.styles if self._in_style else self.text).append(data)

    @property
    def plain(self) -> str:
        return " ".join(" ".join(self.text).split())


def parsed(html: str) -> Page:
    page = Page()
    page.feed(html)
    page.close()
    return page


def assert_self_contained(page: Page) -> None:
    assert not FETCHING_TAGS & set(page.tags), FETCHING_TAGS & set(page.tags)
    for name, value in page.attributes:
        assert name not in REFERENCE_ATTRIBUTES or value.startswith("#"), (name, value)
        assert "://" not in value and not value.startswith("//"), (name, value)
        if name == "style":
            assert "url(" not in value
    css = " ".join(page.styles)
    assert "url(" not in css and "@import" not in css and "@font-face" not in css


def report(tmp_path: Path, session: Path, *args: str) -> tuple[str, Page]:
    out = tmp_path / f"{session.stem}.html"
    result = CliRunner().invoke(cli, ["report", str(session), "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    html = out.read_text(encoding="utf-8")
    return html, parsed(html)


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


def test_the_overflow_report_holds_its_figures_and_nothing_external(tmp_path: Path) -> None:
    html, page = report(tmp_path, SAMPLES / "claude-code" / "overflow.jsonl")
    assert_self_contained(page)
    assert page.tags.count("svg") == 2  # the gauge, and the fullest call's breakdown
    gauge_columns = re.findall(r'<rect [^>]*fill="var\(--(?:recorded|window)\)"', html)
    assert len(gauge_columns) == 86  # a column per call
    text = page.plain
    assert "overflow.jsonl" in text and "claude-code 2.1.39" in text
    assert "Call 84 (message 198) overflowed" in text
    assert "209,658 of 200,000 tokens" in text
    assert "mcp__ci__get_job_log" in text and "68,170" in text  # the biggest contributor
    # the diagnosis's verdict, by the agent's rule (167,000): the recording passed it and did not
    # compact (the threshold is never taken from the recording, which would say 'off or higher')
    assert "That check should have compacted before call 84" in text
    assert "The recording holds no compaction." in text
    assert "What fills the window" in text and "tool outputs: mcp__ci__get_job_log" in text


def test_the_compactions_with_their_trigger_evidence_and_fidelity(tmp_path: Path) -> None:
    _html, page = report(tmp_path, SAMPLES / "claude-code" / "compacted.jsonl")
    assert_self_contained(page)
    text = page.plain
    assert "167,888" in text and "53,785" in text
    assert "compactMetadata.trigger is auto (line 533)" in text
    assert "auto" in text and "manual" in text and "same" in text
    assert "threshold in (166,924, 167,792]" in text
    assert "kept 26 of 45 facts" in text  # what the first summary kept of its head
    assert "$5.37" in text  # the session's cost
    assert page.text.count("◇") >= 2  # a mark per recorded compaction, and the legend's


def test_text_from_the_session_is_escaped(tmp_path: Path) -> None:
    hostile = "<img src=http://example.invalid/x.png>"
    builder = SessionBuilder().user("<script>alert(1)</script>")
    builder.call(hostile, context=120_000).result(tokens=60_000)
    builder.reply("done", context=210_000)
    folder = tmp_path / "sessions"
    folder.mkdir()
    path = folder / "hostile.jsonl"
    write_session(builder.session(fmt=SourceFormat.CLAUDE_CODE, window=200_000), path)
    html, page = report(tmp_path, path)
    assert_self_contained(page)
    assert hostile in page.plain  # shown as text, in the contributors' table
    assert "<img" not in html and "<script" not in html


def test_an_existing_page_is_not_overwritten_without_force(tmp_path: Path) -> None:
    out = tmp_path / "out.html"
    out.write_text("keep me")
    session = str(SAMPLES / "pi" / "session.jsonl")
    refused = CliRunner().invoke(cli, ["report", session, "-o", str(out)])
    assert refused.exit_code == 2 and "--force" in refused.output
    assert out.read_text() == "keep me"
    forced = CliRunner().invoke(cli, ["report", session, "-o", str(out), "--force"])
    assert forced.exit_code == 0 and out.read_text().startswith("<!DOCTYPE html>")
    to_stdout = CliRunner().invoke(cli, ["report", session, "-o", "-"])
    assert to_stdout.exit_code == 0 and "184,588" in to_stdout.output


def test_a_file_that_is_no_session_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("nope\n")
    result = CliRunner().invoke(cli, ["report", str(bad), "-o", str(tmp_path / "out.html")])
    assert result.exit_code == 2 and "not a session" in result.output
    assert not (tmp_path / "out.html").exists()
