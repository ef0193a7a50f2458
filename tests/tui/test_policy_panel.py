"""The policy panel: valid edits post Changed, invalid ones do not, presets fill every field,
TOML save/load, and no API key ever reaches the screen."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Label, Select, Switch

from core.policy import PRESETS, get_preset, load_policy
from tests.support.tui_harness import until
from tests.support.views_fixtures import Host
from tui.screens.policy_path_prompt import PolicyPathPrompt
from tui.widgets.policy_fields import (
    PRESERVED_ON_PRESET,
    format_value,
    get_value,
    parse_value,
    policy_fields,
)
from tui.widgets.policy_panel import PolicyPanel

SIZE = (100, 40)


async def _edits_applied(pilot: Pilot[None], panel: PolicyPanel) -> None:
    """Wait until the panel has applied what was typed (its debounce over) and the host has had
    the message it posted: a condition, not a fixed time."""
    await pilot.pause()
    await until(pilot, lambda: not panel.edit_pending, "the panel's debounce ended")
    await pilot.pause()


def _panel(policy_name: str = "seed") -> tuple[Host, PolicyPanel]:
    panel = PolicyPanel(get_preset(policy_name))
    return Host(panel), panel


def _changed(app: Host) -> list[PolicyPanel.Changed]:
    return [m for m in app.posted if isinstance(m, PolicyPanel.Changed)]


def _screen_text(app: Host) -> str:
    return "\n".join(
        "".join(segment.text for segment in strip)
        for strip in app.screen._compositor.render_strips()
    )


def test_every_policy_field_has_a_row_and_help() -> None:
    specs = policy_fields()
    paths = {spec.path for spec in specs}
    for section in ("truncation", "pruning", "split", "compaction", "llm"):
        model = getattr(get_preset("seed"), section)
        for name in type(model).model_fields:
            assert f"{section}.{name}" in paths
    assert {"estimator", "context_window", "name", "description"} <= paths
    assert all(spec.help for spec in specs), [s.path for s in specs if not s.help]
    kinds = {spec.path: spec.kind for spec in specs}
    assert kinds["truncation.enabled"] == "bool"
    assert kinds["truncation.max_bytes"] == "int"
    assert kinds["split.tail_ratio"] == "float"
    assert kinds["compaction.threshold_rule"] == "choice"
    assert kinds["pruning.protected_tools"] == "list"
    assert kinds["truncation.per_tool"] == "tools"


def test_text_round_trips_for_every_field_of_every_preset() -> None:
    for policy in PRESETS.values():
        for spec in policy_fields():
            if spec.kind in ("bool", "choice"):
                continue
            value = get_value(policy, spec)
            parsed = parse_value(spec, format_value(spec, value))
            if spec.kind == "tools":
                assert parsed == {k: v.model_dump(exclude_none=True) for k, v in value.items()}
            else:
                assert parsed == value, spec.path


async def test_editing_max_bytes_posts_changed_with_the_new_value() -> None:
    app, panel = _panel()
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("truncation")
        field = panel.field_widget("truncation.max_bytes")
        assert isinstance(field, Input)
        field.focus()
        await pilot.press("ctrl+u", *"30000")
        await _edits_applied(pilot, panel)
        changed = _changed(app)
        assert changed
        assert changed[-1].policy.truncation.max_bytes == 30_000
        assert changed[-1].policy.truncation.max_lines == get_preset("seed").truncation.max_lines
        # every message carries a value the user actually had in the field
        assert {m.policy.truncation.max_bytes for m in changed} <= {3, 30, 300, 3000, 30_000}
        assert panel.policy.truncation.max_bytes == 30_000
        assert not panel.errors


async def test_rapid_edits_are_debounced_into_one_message() -> None:
    app, panel = _panel()
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("truncation")
        await pilot.pause()
        field = panel.field_widget("truncation.max_lines")
        assert isinstance(field, Input)
        for text in ("1", "15", "150", "1500"):  # four edits in one burst
            field.value = text
        await _edits_applied(pilot, panel)
        assert [m.policy.truncation.max_lines for m in _changed(app)] == [1500]


async def test_invalid_text_shows_the_message_and_posts_nothing() -> None:
    app, panel = _panel()
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("truncation")
        field = panel.field_widget("truncation.max_bytes")
        field.focus()
        await pilot.press("ctrl+u", *"lots")
        await _edits_applied(pilot, panel)
        assert _changed(app) == []
        assert "truncation.max_bytes" in panel.errors
        assert field.has_class("-invalid")
        assert "whole number" in _screen_text(app)
        assert panel.policy.truncation.max_bytes == get_preset("seed").truncation.max_bytes

        await pilot.press("ctrl+u", "0")  # a number, but the model wants >= 1
        await _edits_applied(pilot, panel)
        assert _changed(app) == []
        assert "greater than or equal to 1" in panel.errors["truncation.max_bytes"]

        await pilot.press("ctrl+u", *"4096")  # fixing it clears the message and applies
        await _edits_applied(pilot, panel)
        assert not panel.errors
        assert not field.has_class("-invalid")
        changed = _changed(app)
        assert changed and changed[-1].policy.truncation.max_bytes == 4096
        assert {m.policy.truncation.max_bytes for m in changed} <= {4, 40, 409, 4096}


async def test_switch_and_select_apply_at_once() -> None:
    app, panel = _panel()
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("pruning", "compaction")
        switch = panel.field_widget("pruning.enabled")
        assert isinstance(switch, Switch) and switch.value is True
        switch.toggle()
        await pilot.pause()
        rule = panel.field_widget("compaction.threshold_rule")
        assert isinstance(rule, Select)
        rule.value = "codex"
        await pilot.pause()
        changed = _changed(app)
        assert [m.policy.pruning.enabled for m in changed] == [False, False]
        assert changed[-1].policy.compaction.threshold_rule == "codex"


async def test_switching_preset_updates_every_field() -> None:
    app, panel = _panel("seed")
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections()
        await pilot.pause()
        before = panel.policy
        panel.query_one("#pp-preset", Select).value = "codex"
        await pilot.pause()
        changed = _changed(app)
        assert len(changed) == 1
        codex = get_preset("codex")
        shown = changed[0].policy
        assert shown.name == "codex"
        for spec in panel.specs:
            preserved = spec.section in PRESERVED_ON_PRESET or spec.name in PRESERVED_ON_PRESET
            expected = get_value(before if preserved else codex, spec)
            assert get_value(shown, spec) == expected, spec.path
            widget = panel.field_widget(spec.path)
            if isinstance(widget, (Switch, Select)):
                assert widget.value == expected, spec.path
            else:
                assert isinstance(widget, Input)
                assert widget.value == format_value(spec, expected), spec.path
        assert "codex" in _screen_text(app)


async def test_set_policy_posts_nothing() -> None:
    app, panel = _panel("seed")
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("truncation")
        panel.set_policy(get_preset("pi"))
        await _edits_applied(pilot, panel)
        assert _changed(app) == []
        field = panel.field_widget("truncation.max_bytes")
        assert isinstance(field, Input) and field.value == "51200"


async def test_save_through_the_prompt_and_load_back(tmp_path: Path) -> None:
    target = tmp_path / "mine.toml"
    app, panel = _panel("pi")
    async with app.run_test(size=SIZE) as pilot:
        panel.focus()
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, PolicyPathPrompt)
        prompt_input = app.screen.query_one(Input)
        prompt_input.value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, PolicyPathPrompt)
        assert target.exists()
        assert load_policy(target).compaction == get_preset("pi").compaction

        panel.set_policy(get_preset("seed"))
        assert panel.load_from(str(target))
        await pilot.pause()
        assert panel.policy.compaction.threshold_rule == "pi"
        assert _changed(app)[-1].policy.compaction.reserve_tokens == 16384


async def test_a_bad_file_is_a_notification_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[truncation]\nmax_bytes = "many"\n', encoding="utf-8")
    app, panel = _panel("seed")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        assert not panel.load_from(str(bad))
        assert not panel.load_from(str(tmp_path / "missing.toml"))
        assert not panel.save_to(str(tmp_path / "no" / "such" / "dir.toml"))
        await pilot.pause()
        notes = [n.message for n in app._notifications]
        assert any("truncation.max_bytes" in n for n in notes)
        assert any("cannot read" in n for n in notes)
        assert any("cannot write" in n for n in notes)
        assert _changed(app) == []
        assert panel.policy == get_preset("seed")


async def test_the_api_key_is_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-very-secret-value"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    app, panel = _panel("seed")
    async with app.run_test(size=(100, 120)) as pilot:
        await panel.open_sections("llm")
        panel.query_one("#pp-section-llm").scroll_visible(animate=False)
        await pilot.pause()
        text = _screen_text(app)
        assert "OPENAI_API_KEY is set" in text
        assert secret not in text
        assert all(secret not in w.value for w in panel.query(Input))


async def test_the_compaction_fields_of_issue_12_have_rows_and_help() -> None:
    paths = (
        "compaction.use_agent_estimates",
        "compaction.count_earlier_reasoning",
        "compaction.turn_start_check_sees_prompt",
        "compaction.autocompact_buffer_tokens",
    )
    specs = {spec.path: spec for spec in policy_fields()}
    app, panel = _panel("codex")
    async with app.run_test(size=SIZE) as pilot:
        await panel.open_sections("compaction")
        await pilot.pause()
        for path in paths:
            assert specs[path].help
            widget = panel.field_widget(path)
            assert widget.is_mounted
            row = panel.query_one(f"#{specs[path].widget_id}-row")
            assert specs[path].help[:30] in str(row.query_one(".pp-help").render())


async def test_focus_asked_for_before_the_fields_exist_lands_on_the_preset() -> None:
    """``p`` pressed as a session appears: the panel is told to focus before it has composed
    its fields (this raised NoMatches and ended the app)."""
    app = Host(Label("host"))
    async with app.run_test(size=SIZE) as pilot:
        panel = PolicyPanel(get_preset("pi"))
        mounting = app.mount(panel)
        panel.focus()
        await mounting
        await pilot.pause()
        assert isinstance(app.focused, Select) and app.focused.id == "pp-preset"
