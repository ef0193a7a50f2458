"""The policy panel: every limit of the active policy, editable, with its help text.

The form is generated from the pydantic model (:class:`core.policy.Policy`): one row per field,
grouped by section (general, truncation, pruning, split, compaction, LLM), each with the field's
docstring as help text. The input matches the field's type: a :class:`~textual.widgets.Switch` for
booleans, a :class:`~textual.widgets.Select` for ``Literal`` choices, an
:class:`~textual.widgets.Input` for numbers and text (comma-separated for lists). Every edit is
validated by the model itself; an invalid value shows the model's message under the field and is
not applied. Valid edits post :class:`PolicyPanel.Changed` with the new policy (typing is
debounced, so a replay starts once the user pauses).

A preset switcher loads any of the built-in presets (keeping the LLM settings and the window
override, which describe the user's setup rather than the agent), and ``inferred``: the recording
agent's preset with the threshold fitted to the session's own compactions (labelled: not a
prediction), once the first replay has worked it out. ``ctrl+s`` / ``ctrl+o`` save and load TOML through a small path prompt. API keys are
never shown: only the name of the environment variable that holds one, and whether it is set.

Under the preset, the evidence: the window and where it comes from (the sentence that says why),
where the threshold comes from (the rule of the agent's version: never the recording's own
compactions) and the interval the recording allows ("compacted at X; did not at Y → threshold in
(Y, X]").

An edited field is replayed exactly as edited: no threshold is ever taken from the recording's
own compactions (the interval they imply is shown as a fact, and ``inferred`` is a preset of its
own, labelled as fitted to this session).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ValidationError
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.widgets import Button, Collapsible, Input, Label, Select, Static, Switch

from core.policy import PRESETS, Policy, PolicyError, get_preset, load_policy, save_policy
from tui.screen_state import INFERRED, Inferred
from tui.screens.policy_path_prompt import PathKind
from tui.widgets.policy_evidence import evidence_text
from tui.widgets.policy_fields import (
    PRESERVED_ON_PRESET,
    SECTIONS,
    FieldSpec,
    ParseError,
    format_value,
    get_value,
    help_text,
    is_modified,
    parse_value,
    placeholder,
    policy_fields,
    preset_of,
    section_digest,
    section_doc,
    validation_message,
    with_value,
)

if TYPE_CHECKING:
    from core.replay import ReplayResult

DEBOUNCE_S = 0.15
"""Quiet time after the last keystroke before an edit is applied."""

# -- one field -----------------------------------------------------------------------------------


class FieldRow(Vertical):
    """The name, the input, the help text and the validation message of one field."""

    def __init__(self, spec: FieldSpec, policy: Policy) -> None:
        super().__init__(classes="pp-field", id=f"{spec.widget_id}-row")
        self.spec = spec
        self._policy = policy

    def compose(self) -> ComposeResult:
        spec = self.spec
        value = get_value(self._policy, spec)
        with Horizontal(classes="pp-line"):
            yield Label(spec.name, classes="pp-name")
            if spec.kind == "bool":
                yield Switch(value=bool(value), id=spec.widget_id, classes="pp-input")
            elif spec.kind == "choice":
                yield Select(
                    [(c, c) for c in spec.choices],
                    value=str(value) if value is not None else Select.BLANK,
                    allow_blank=spec.optional,
                    compact=True,
                    id=spec.widget_id,
                    classes="pp-input",
                )
            else:
                yield Input(
                    value=format_value(spec, value),
                    placeholder=placeholder(spec),
                    compact=True,
                    id=spec.widget_id,
                    classes="pp-input",
                )
        yield Static(help_text(spec, self._policy), classes="pp-help", markup=False)
        yield Label("", classes="pp-error", id=f"{spec.widget_id}-error")


# -- the panel ---------------------------------------------------------------------------------


class PolicyPanel(Widget):
    """Every field of the active policy with its help text; preset switcher; save/load TOML."""

    DEFAULT_CSS = """
    PolicyPanel {
        layout: vertical;
        height: 1fr;
        width: 1fr;
        background: $surface;
    }
    #pp-header {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    #pp-title-row, #pp-preset-row, #pp-buttons {
        height: 1;
    }
    #pp-title {
        width: auto;
        text-style: bold;
        color: $text-accent;
        padding-right: 1;
    }
    #pp-modified {
        width: 1fr;
        color: $text-muted;
    }
    #pp-modified.-modified {
        color: $text-warning;
        text-style: bold;
    }
    #pp-preset-label {
        width: 8;
        color: $foreground;
    }
    #pp-preset {
        width: 1fr;
    }
    #pp-preset-help {
        height: auto;
        max-height: 2;
        overflow: hidden;
    }
    #pp-evidence {
        height: auto;
        color: $text-muted;
        padding: 0 1;
    }
    #pp-evidence-note {
        height: auto;
        color: $text-warning;
        display: none;
    }
    #pp-buttons {
        margin-bottom: 0;
    }
    #pp-buttons Button {
        margin-right: 2;
        min-width: 14;
    }
    #pp-fields {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    #pp-fields Collapsible {
        padding-left: 0;
        padding-bottom: 0;
        border-top: hkey $panel-lighten-1;
    }
    #pp-fields CollapsibleTitle {
        width: 100%;
        color: $text-accent;
        text-style: bold;
        padding: 0 1;
    }
    #pp-fields CollapsibleTitle:focus {
        color: $block-cursor-foreground;
    }
    #pp-fields Contents {
        padding: 0 0 0 1;
    }
    .pp-section-doc {
        color: $text-muted;
        text-style: italic;
        padding: 0 1;
        margin-bottom: 1;
    }
    .pp-field {
        height: auto;
        padding: 0 1;
        margin-bottom: 1;
    }
    .pp-line {
        height: 1;
    }
    .pp-name {
        width: auto;
        min-width: 16;
        padding-right: 1;
        color: $foreground;
    }
    .pp-field:focus-within .pp-name {
        color: $text-accent;
        text-style: bold;
    }
    .pp-line Input, .pp-line Select {
        width: 1fr;
    }
    .pp-line Input {
        background: $boost;
    }
    .pp-line Input:focus {
        background: $primary 20%;
    }
    .pp-line Input.-invalid {
        background: $error 25%;
    }
    .pp-line Switch {
        border: none;
        height: 1;
        padding: 0;
        width: auto;
        background: transparent;
    }
    .pp-line Switch:focus {
        background-tint: $foreground 10%;
    }
    .pp-help {
        color: $text-muted;
        height: auto;
    }
    .pp-error {
        color: $text-error;
        text-style: bold;
        display: none;
        height: auto;
    }
    PolicyPanel.-short #pp-title-row,
    PolicyPanel.-short #pp-preset-help,
    PolicyPanel.-short #pp-buttons {
        display: none;
    }
    PolicyPanel.-short .pp-section-doc {
        display: none;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save TOML", id="policy.save"),
        Binding("ctrl+o", "load", "Load TOML", id="policy.load"),
    ]

    class PathWanted(Message):
        """Save or load asked for: whoever hosts the panel asks for a TOML path, then calls
        :meth:`PolicyPanel.save_to` or :meth:`PolicyPanel.load_from` with it."""

        def __init__(self, panel: PolicyPanel, kind: PathKind) -> None:
            super().__init__()
            self.panel = panel
            self.kind: PathKind = kind
            """``save`` or ``load``."""

        @property
        def control(self) -> PolicyPanel:
            """The panel that asked."""
            return self.panel

    class Changed(Message):
        """Posted on every valid edit (debounced while typing), preset switch or load."""

        def __init__(self, policy: Policy) -> None:
            super().__init__()
            self.policy = policy
            """The new policy (validated)."""

    def __init__(
        self,
        policy: Policy,
        *,
        native: Policy | None = None,
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.policy = policy
        """The policy as edited so far (always valid)."""
        self.native = native
        """The recording agent's preset as the session's version behaves: what its name stands
        for in this session (a policy is "modified" against it, not the plain preset)."""
        self.specs = policy_fields()
        self._by_id = {spec.widget_id: spec for spec in self.specs}
        self._timer: Timer | None = None
        self._pending = False
        self.errors: dict[str, str] = {}
        """Field path -> validation message of the fields whose text is invalid right now."""
        self._built: set[str | None] = {None}
        """Sections whose fields are mounted: the general one from the start, the others the
        first time they open (a form of ~60 fields takes seconds to mount at once)."""
        self.inferred: Inferred | None = None
        """The ``inferred`` preset of this session, once known (:meth:`show_evidence`)."""
        self.evidence_note = ""
        """What the panel did to the evidence on the user's behalf (shown under the preset)."""
        self._evidence: ReplayResult | None = None

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="pp-header"):
            with Horizontal(id="pp-title-row"):
                yield Label("Policy", id="pp-title")
                yield Label("", id="pp-modified")
            with Horizontal(id="pp-preset-row"):
                yield Label("preset", id="pp-preset-label")
                yield Select(
                    [*((name, name) for name in PRESETS), (INFERRED, INFERRED)],
                    prompt="(custom)",
                    value=self._preset_of(self.policy) or Select.BLANK,
                    allow_blank=True,
                    compact=True,
                    id="pp-preset",
                )
            yield Static("", id="pp-preset-help", markup=False)
            yield Label("", id="pp-evidence-note")
            with Horizontal(id="pp-buttons"):
                yield Button("Save TOML ^s", id="pp-save", compact=True)
                yield Button("Load TOML ^o", id="pp-load", compact=True)
        with VerticalScroll(id="pp-fields"):
            with Collapsible(
                title="Where the window and the threshold come from",
                collapsed=False,
                id="pp-section-evidence",
            ):
                yield Static("The replay has not finished yet.", id="pp-evidence", markup=False)
            for section, title in SECTIONS:
                built = section in self._built
                with Collapsible(
                    title=self._section_title(section, title),
                    collapsed=not built,
                    id=f"pp-section-{section or 'general'}",
                    classes="pp-section",
                ):
                    yield Static(section_doc(section), classes="pp-section-doc")
                    if built:
                        for spec in self.specs:
                            if spec.section == section:
                                yield FieldRow(spec, self.policy)

    def _section_title(self, section: str | None, title: str) -> str:
        return f"{title} · {section_digest(section, self.policy)}"

    SHORT_ROWS = 16
    """Below this height the header shrinks to the preset switcher (keys still save/load)."""

    def on_mount(self) -> None:
        self._refresh_header()
        self._draw_evidence()  # (given before the panel was mounted)

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.SHORT_ROWS, "-short")

    def focus(self, scroll_visible: bool = True) -> PolicyPanel:
        """Focus the preset switcher (the panel itself takes no focus); asked for before the
        panel has composed its fields (``p`` pressed as the session appears), once it has."""
        switchers = self.query("#pp-preset").results(Select)
        switcher = next(switchers, None)
        if switcher is not None:
            switcher.focus(scroll_visible)
        elif self.is_attached:
            self.call_after_refresh(self.focus, scroll_visible)
        return self

    # -- sections --------------------------------------------------------------------------------

    def _collapsible(self, section: str | None) -> Collapsible:
        return self.query_one(f"#pp-section-{section or 'general'}", Collapsible)

    def _build(self, section: str | None) -> AwaitMount | None:
        if section in self._built:
            return None
        self._built.add(section)
        rows = [FieldRow(spec, self.policy) for spec in self.specs if spec.section == section]
        return self._collapsible(section).query_one(Collapsible.Contents).mount_all(rows)

    @on(Collapsible.Expanded, ".pp-section")
    def _section_expanded(self, event: Collapsible.Expanded) -> None:
        event.stop()
        key = (event.collapsible.id or "").removeprefix("pp-section-")
        self._build(None if key == "general" else key)

    async def open_sections(self, *sections: str | None) -> None:
        """Open ``sections`` (every section when none is given) with their fields mounted."""
        for section in sections or tuple(section for section, _ in SECTIONS):
            waiting = self._build(section)
            if waiting is not None:
                await waiting
            self._collapsible(section).collapsed = False

    def is_built(self, spec: FieldSpec) -> bool:
        """The field's row is mounted (its section was opened at least once)."""
        return spec.section in self._built

    # -- public API ------------------------------------------------------------------------------

    def set_policy(self, policy: Policy) -> None:
        """Show ``policy`` in every field (no :class:`Changed` is posted)."""
        self._cancel_timer()
        self._pending = False
        self.policy = policy
        self.errors.clear()
        if not self.is_mounted:
            return
        with self.prevent(Input.Changed, Select.Changed, Switch.Changed):
            for spec in self.specs:
                if self.is_built(spec):
                    self._show_value(spec)
                    self._show_error(spec, "")
            self.query_one("#pp-preset", Select).value = self._preset_of(policy) or Select.BLANK
        self._refresh_header()

    def field_widget(self, path: str) -> Widget:
        """The input of field ``path`` (e.g. ``truncation.max_bytes``); its section must be open."""
        return self.query_one("#pp-" + path.replace(".", "--"))

    # -- showing ---------------------------------------------------------------------------------

    def _show_value(self, spec: FieldSpec) -> None:
        widget = self.query_one(f"#{spec.widget_id}")
        value = get_value(self.policy, spec)
        if isinstance(widget, Switch):
            widget.value = bool(value)
        elif isinstance(widget, Select):
            widget.value = str(value) if value is not None else Select.BLANK
        elif isinstance(widget, Input):
            text = format_value(spec, value)
            if widget.value != text:
                widget.value = text
        if spec.path == "llm.api_key_env":
            row = self.query_one(f"#{spec.widget_id}-row")
            row.query_one(".pp-help", Static).update(help_text(spec, self.policy))

    def _show_error(self, spec: FieldSpec, message: str) -> None:
        label = self.query_one(f"#{spec.widget_id}-error", Label)
        label.update(f"✗ {message}" if message else "")
        label.display = bool(message)
        self.query_one(f"#{spec.widget_id}").set_class(bool(message), "-invalid")
        if message:
            self.errors[spec.path] = message
        else:
            self.errors.pop(spec.path, None)

    def _preset_of(self, policy: Policy) -> str | None:
        """The preset ``policy`` is named after (``inferred`` included, once known)."""
        if policy.name == INFERRED:
            return INFERRED if self.inferred is not None else None
        return preset_of(policy)

    def _modified(self, policy: Policy) -> bool:
        if policy.name == INFERRED and self.inferred is not None:
            return is_modified(policy, self.inferred.policy)
        if self.native is not None and policy.name == self.native.name:
            return is_modified(policy, self.native)
        return is_modified(policy)

    def show_evidence(self, result: ReplayResult, inferred: Inferred | None) -> None:
        """Say where the window and the thresholds of ``result`` come from, and what the
        session's compactions show of its agent's threshold (``inferred``: also the policy the
        preset switcher offers as ``inferred``)."""
        self.inferred = inferred
        self._evidence = result
        if self.is_mounted:
            self._draw_evidence()

    def forget_evidence(self) -> None:
        """Let go of the result shown as evidence (the screen is closed)."""
        self._evidence = None
        self.inferred = None

    def _draw_evidence(self) -> None:
        result = self._evidence
        if result is None:
            return
        self.query_one("#pp-evidence", Static).update(evidence_text(result, self.inferred))
        with self.prevent(Select.Changed):
            self.query_one("#pp-preset", Select).value = (
                self._preset_of(self.policy) or Select.BLANK
            )
        self._refresh_header()

    def _refresh_header(self) -> None:
        policy = self.policy
        marker = self.query_one("#pp-modified", Label)
        name = self._preset_of(policy)
        modified = self._modified(policy)
        if name is None:
            marker.update(f"{policy.name} (custom)")
        elif modified:
            marker.update(f"{name} · modified")
        else:
            marker.update(name)
        marker.set_class(modified, "-modified")
        for section, title in SECTIONS:
            self._collapsible(section).title = self._section_title(section, title)
        description = policy.description or "No description."
        self.query_one("#pp-preset-help", Static).update(
            f"{description} (A preset switch keeps the LLM settings and window override.)"
        )
        note = self.query_one("#pp-evidence-note", Label)
        note.update(f"⚠ {self.evidence_note}" if self.evidence_note else "")
        note.display = bool(self.evidence_note)

    # -- editing ---------------------------------------------------------------------------------

    def _apply(self, spec: FieldSpec, raw: Any, *, debounce: bool) -> None:
        try:
            value = parse_value(spec, raw) if isinstance(raw, str) else raw
            candidate = with_value(self.policy, spec, value)
        except ParseError as exc:
            self._show_error(spec, str(exc))
            return
        except ValidationError as exc:
            self._show_error(spec, validation_message(exc, spec))
            return
        self._show_error(spec, "")
        if candidate == self.policy:
            return
        self.policy = candidate
        self._refresh_header()
        if spec.path == "llm.api_key_env":
            self._show_value(spec)
        self._pending = True
        if debounce:
            self._cancel_timer()
            self._timer = self.set_timer(DEBOUNCE_S, self._flush)
        else:
            self._flush()

    @property
    def edit_pending(self) -> bool:
        """An edit is waiting for the user's pause (the debounce) before it is applied."""
        return self._pending

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def _flush(self) -> None:
        self._cancel_timer()
        if self._pending:
            self._pending = False
            self.post_message(self.Changed(self.policy))

    # A Changed event can be stale: posted when a widget was mounted, or before set_policy()
    # replaced its value. Only an event carrying the widget's current value is an edit.

    @on(Input.Changed, ".pp-input")
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()
        spec = self._by_id.get(event.input.id or "")
        if spec is not None and event.value == event.input.value:
            self._apply(spec, event.value, debounce=True)

    @on(Input.Submitted, ".pp-input")
    def _input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._flush()

    @on(Switch.Changed, ".pp-input")
    def _switch_changed(self, event: Switch.Changed) -> None:
        event.stop()
        spec = self._by_id.get(event.switch.id or "")
        if spec is not None and event.value == event.switch.value:
            self._apply(spec, bool(event.value), debounce=False)

    @on(Select.Changed, ".pp-input")
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        spec = self._by_id.get(event.select.id or "")
        if spec is None or event.value != event.select.value:
            return
        value = None if event.value is Select.BLANK else str(event.value)
        self._apply(spec, value, debounce=False)

    @on(Select.Changed, "#pp-preset")
    def _preset_changed(self, event: Select.Changed) -> None:
        event.stop()
        value = event.value
        known = value in PRESETS or value == INFERRED
        if value == event.select.value and isinstance(value, str) and known:
            self.switch_preset(value)

    def switch_preset(self, name: str) -> None:
        """Load preset ``name`` (keeping the LLM settings and window override) and apply it;
        ``inferred`` is the session's own, once the first replay has worked it out."""
        if name == INFERRED:
            if self.inferred is None:
                self.app.notify(
                    "The inferred policy comes from the recording agent's compactions: it is "
                    "worked out with the first replay of a session an agent recorded.",
                    title="Policy",
                )
                return
            preset = self.inferred.policy
        elif self.native is not None and name == self.native.name:
            preset = self.native  # the recording agent's, as its version behaves
        else:
            preset = get_preset(name)
        self.evidence_note = ""
        update = {field: getattr(self.policy, field) for field in PRESERVED_ON_PRESET}
        policy = preset.model_copy(update=update)
        if policy == self.policy and not self.errors:
            return
        self.set_policy(policy)
        self._pending = True
        self._flush()

    # -- save / load -----------------------------------------------------------------------------

    @on(Button.Pressed, "#pp-save")
    def _save_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_save()

    @on(Button.Pressed, "#pp-load")
    def _load_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.action_load()

    def writes_refused(self) -> bool:
        """True, with a notification saying why, when the app writes no file (``read_only``:
        ``ctxscope open --read-only``, which ``ctxscope serve`` runs without ``--allow-writes``)."""
        if not getattr(self.app, "read_only", False):
            return False
        self.app.notify(
            "This ctxscope writes no file (a browser session of ctxscope serve; start serve "
            "with --allow-writes to save from the browser).",
            title="Save policy",
            severity="error",
            timeout=10,
        )
        return True

    def action_save(self) -> None:
        """Ask for a path (the screen does, on :class:`PathWanted`) and write the policy there."""
        if self.writes_refused():
            return
        self.post_message(self.PathWanted(self, "save"))

    def action_load(self) -> None:
        """Ask for a path (the screen does, on :class:`PathWanted`) and load a policy from it."""
        self.post_message(self.PathWanted(self, "load"))

    def save_to(self, path: str) -> bool:
        """Write the policy to ``path``; a failure (or read-only mode) is a notification.
        Returns success."""
        if self.writes_refused():
            return False
        target = Path(path).expanduser()
        try:
            save_policy(self.policy, target)
        except OSError as exc:
            self.app.notify(
                f"{target}: cannot write ({exc.strerror or exc})",
                title="Save policy",
                severity="error",
            )
            return False
        self.app.notify(f"Saved {self.policy.name} to {target}", title="Save policy")
        return True

    def load_from(self, path: str) -> bool:
        """Load a policy from ``path`` and apply it; a failure is a notification."""
        try:
            policy = load_policy(Path(path).expanduser())
        except PolicyError as exc:
            self.app.notify(str(exc), title="Load policy", severity="error", timeout=10)
            return False
        self.set_policy(policy)
        self._pending = True
        self._flush()
        self.app.notify(f"Loaded {policy.name} from {path}", title="Load policy")
        return True
