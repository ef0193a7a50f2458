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
override, which describe the user's setup rather than the agent); ``ctrl+s`` / ``ctrl+o`` save and
load TOML through a small path prompt. API keys are never shown: only the name of the environment
variable that holds one, and whether it is set.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.widgets import Button, Collapsible, Input, Label, Select, Static, Switch

from core.policy import PRESETS, Policy, PolicyError, get_preset, load_policy, save_policy

DEBOUNCE_S = 0.15
"""Quiet time after the last keystroke before an edit is applied."""

SECTIONS: tuple[tuple[str | None, str], ...] = (
    (None, "General"),
    ("truncation", "Truncation (T15)"),
    ("pruning", "Pruning (T9)"),
    ("split", "Head / tail split (T8)"),
    ("compaction", "Compaction (T7, T11, T12)"),
    ("llm", "Summary LLM"),
)
"""The panel's sections: a sub-model of :class:`Policy` (None: its top-level fields)."""

PRESERVED_ON_PRESET = ("llm", "context_window")
"""Fields the preset switcher keeps: the user's LLM endpoint and window override."""

FieldKind = Literal["bool", "int", "float", "choice", "text", "list", "tools"]


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One editable field of the policy."""

    section: str | None
    name: str
    kind: FieldKind
    optional: bool
    choices: tuple[str, ...]
    help: str

    @property
    def path(self) -> str:
        """``section.name`` (or ``name`` for a top-level field)."""
        return f"{self.section}.{self.name}" if self.section else self.name

    @property
    def widget_id(self) -> str:
        return "pp-" + self.path.replace(".", "--")


def _strip_optional(annotation: Any) -> tuple[Any, bool]:
    origin = get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], True
    return annotation, False


def _field_kind(annotation: Any) -> tuple[FieldKind, bool, tuple[str, ...]]:
    inner, optional = _strip_optional(annotation)
    origin = get_origin(inner)
    if inner is bool:
        return "bool", optional, ()
    if inner is int:
        return "int", optional, ()
    if inner is float:
        return "float", optional, ()
    if origin is Literal:
        return "choice", optional, tuple(str(a) for a in get_args(inner))
    if origin is list:
        return "list", optional, ()
    if origin is dict:
        return "tools", optional, ()
    return "text", optional, ()


def _help(model: type[BaseModel], name: str) -> str:
    description = model.model_fields[name].description or ""
    return " ".join(description.split()).replace("``", "")


def policy_fields() -> list[FieldSpec]:
    """Every editable field of :class:`Policy`, in section order."""
    specs: list[FieldSpec] = []
    for section, _title in SECTIONS:
        if section is None:
            model: type[BaseModel] = Policy
            names = [
                n
                for n, info in Policy.model_fields.items()
                if not (
                    isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)
                )
            ]
        else:
            annotation = Policy.model_fields[section].annotation
            assert isinstance(annotation, type) and issubclass(annotation, BaseModel)
            model = annotation
            names = list(model.model_fields)
        for name in names:
            kind, optional, choices = _field_kind(model.model_fields[name].annotation)
            specs.append(FieldSpec(section, name, kind, optional, choices, _help(model, name)))
    return specs


def section_doc(section: str | None) -> str:
    """The first sentence of a section model's docstring (its subtitle in the panel)."""
    if section is None:
        return "What the policy is called and how it counts tokens."
    annotation = Policy.model_fields[section].annotation
    doc = (getattr(annotation, "__doc__", None) or "").strip().splitlines()
    return doc[0] if doc else ""


# -- values <-> text ---------------------------------------------------------------------------


def get_value(policy: Policy, spec: FieldSpec) -> Any:
    owner: BaseModel = getattr(policy, spec.section) if spec.section else policy
    return getattr(owner, spec.name)


def format_value(spec: FieldSpec, value: Any) -> str:
    """The text an Input shows for ``value``."""
    if value is None:
        return ""
    if spec.kind == "list":
        return ", ".join(str(v) for v in value)
    if spec.kind == "tools":
        parts = []
        for tool, limits in value.items():
            data = limits.model_dump(exclude_none=True) if isinstance(limits, BaseModel) else limits
            assignments = ",".join(
                f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in data.items()
            )
            parts.append(f"{tool}:{assignments}" if assignments else tool)
        return "; ".join(parts)
    if spec.kind == "float":
        return f"{value:g}" if isinstance(value, float) else str(value)
    return str(value)


class ParseError(ValueError):
    """The text of an Input is not a value of the field's type."""


def parse_value(spec: FieldSpec, text: str) -> Any:
    """The value an Input's ``text`` stands for (before the model validates it)."""
    stripped = text.strip()
    if spec.kind in ("int", "float"):
        return _parse_number(spec, stripped)
    if spec.kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    if spec.kind == "tools":
        return _parse_tools(text)
    if spec.optional and not stripped:
        return None
    return text


def _parse_number(spec: FieldSpec, stripped: str) -> int | float | None:
    """A whole number or a number; ``_`` and ``,`` may group digits; empty is None if allowed."""
    if not stripped:
        if spec.optional:
            return None
        raise ParseError("a number is required")
    cleaned = stripped.replace("_", "").replace(",", "")
    try:
        if spec.kind == "int":
            return int(cleaned)
        return float(cleaned)
    except ValueError:
        what = "a whole number" if spec.kind == "int" else "a number"
        raise ParseError(f"{what}, e.g. {'51200' if spec.kind == 'int' else '0.25'}") from None


def _parse_tools(text: str) -> dict[str, dict[str, Any]]:
    """Per-tool limits written ``tool:key=value,key=value; other:key=value``."""
    tools: dict[str, dict[str, Any]] = {}
    for chunk in text.split(";"):
        chunk = chunk.strip()
        if not chunk:
            continue
        tool, _, assignments = chunk.partition(":")
        limits: dict[str, Any] = {}
        for assignment in assignments.split(","):
            if not assignment.strip():
                continue
            key, sep, raw = assignment.partition("=")
            if not sep:
                raise ParseError(f"{tool.strip()}: expected key=value, got {assignment.strip()!r}")
            limits[key.strip()] = _limit_value(raw.strip())
        tools[tool.strip()] = limits
    return tools


def _limit_value(raw: str) -> bool | int | str:
    """``true`` / ``false``, a whole number, or the text itself."""
    if raw.lower() in ("true", "false"):
        return raw.lower() == "true"
    if raw.lstrip("-").isdigit():
        return int(raw)
    return raw


def with_value(policy: Policy, spec: FieldSpec, value: Any) -> Policy:
    """A new policy with one field changed, validated by the model (raises ValidationError)."""
    data = policy.model_dump()
    if spec.section:
        data[spec.section][spec.name] = value
    else:
        data[spec.name] = value
    return Policy.model_validate(data)


def validation_message(error: ValidationError, spec: FieldSpec) -> str:
    """The model's message for ``spec`` (the first error when none names it)."""
    wanted = tuple(p for p in (spec.section, spec.name) if p)
    errors = error.errors()
    chosen = next((e for e in errors if tuple(e["loc"][: len(wanted)]) == wanted), errors[0])
    rest = [str(p) for p in chosen["loc"][len(wanted) :]]
    where = f"{'.'.join(rest)}: " if rest else ""
    message = str(chosen["msg"])
    if chosen["type"] == "extra_forbidden":
        message = "unknown field"
    return where + message.removeprefix("Value error, ")


def preset_of(policy: Policy) -> str | None:
    """The preset ``policy`` is named after, if any."""
    return policy.name if policy.name in PRESETS else None


def is_modified(policy: Policy) -> bool:
    """A preset-named policy that differs from its preset (LLM and window settings aside)."""
    name = preset_of(policy)
    if name is None:
        return False
    exclude = set(PRESERVED_ON_PRESET)
    return policy.model_dump(exclude=exclude) != PRESETS[name].model_dump(exclude=exclude)


# -- the path prompt ---------------------------------------------------------------------------


class PolicyPathPrompt(ModalScreen[str | None]):
    """Ask for a TOML path (save or load); Enter accepts, Esc cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, title: str, value: str, hint: str) -> None:
        super().__init__()
        self._title = title
        self._value = value
        self._hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(id="pp-prompt"):
            yield Label(self._title, id="pp-prompt-title")
            yield Input(value=self._value, placeholder="policy.toml", id="pp-prompt-input")
            yield Label(self._hint, id="pp-prompt-hint")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.dismiss(text or None)

    def action_cancel(self) -> None:
        self.dismiss(None)


# -- one field -----------------------------------------------------------------------------------


def _placeholder(spec: FieldSpec) -> str:
    if spec.kind == "list":
        return "comma-separated, e.g. bash, read"
    if spec.kind == "tools":
        return "tool:max_bytes=30000,direction=tail; other:…"
    if spec.optional:
        return "empty: none"
    return ""


def help_text(spec: FieldSpec, policy: Policy) -> str:
    """The help under a field: its docstring, plus what the user needs to know to fill it in."""
    text = spec.help
    if spec.path == "llm.api_key_env":
        name = str(get_value(policy, spec))
        state = "set" if name and os.environ.get(name) else "not set"
        text += f" ({name or 'no variable'} is {state} here; its value is never shown.)"
    if spec.kind == "tools":
        text += " Syntax: tool:key=value,key=value; another_tool:key=value"
    return text


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
                    placeholder=_placeholder(spec),
                    compact=True,
                    id=spec.widget_id,
                    classes="pp-input",
                )
        yield Static(help_text(spec, self._policy), classes="pp-help", markup=False)
        yield Label("", classes="pp-error", id=f"{spec.widget_id}-error")


def section_digest(section: str | None, policy: Policy) -> str:
    """One line saying what a section is set to (shown in its title)."""
    if section is None:
        window = f"window {policy.context_window:,}" if policy.context_window else "session window"
        return f"{policy.estimator}, {window}"
    if section == "truncation":
        t = policy.truncation
        if not t.enabled:
            return "off"
        lines = f"{t.max_lines:,} lines" if t.max_lines else "no line limit"
        return f"{lines} / {t.max_bytes:,} B, {t.direction}"
    if section == "pruning":
        p = policy.pruning
        if not p.enabled:
            return "off"
        rule = ", budget rule" if p.budget_rule else ""
        return f"last {p.protect_turns} turns kept{rule}"
    if section == "split":
        sp = policy.split
        if sp.tail_budget_tokens is not None:
            budget = f"tail {sp.tail_budget_tokens:,}"
        else:
            budget = f"tail {sp.tail_ratio:.0%} ({short(sp.tail_min_tokens)}–{short(sp.tail_max_tokens)})"
        return f"{sp.mode}, {budget}"
    if section == "compaction":
        c = policy.compaction
        if not c.auto:
            return f"manual only, {c.strategy}"
        if c.threshold_rule == "codex":
            rule = f"codex {c.codex_ratio:.0%}"
        else:
            rule = f"{c.threshold_rule} −{short(c.reserve_tokens)}"
        return f"{rule}, {c.strategy}, {c.template}"
    llm = policy.llm
    if llm.provider == "mock":
        return "mock (offline)"
    return f"openai: {llm.model or 'no model'}"


def short(tokens: int) -> str:
    """``20000`` -> ``20k``."""
    return f"{tokens // 1000}k" if tokens >= 1000 and tokens % 1000 == 0 else f"{tokens:,}"


# -- the panel ---------------------------------------------------------------------------------


class PolicyPanel(Widget):
    """Every field of the active policy with its help text; preset switcher; save/load TOML."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Save TOML"),
        Binding("ctrl+o", "load", "Load TOML"),
    ]

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
        name: str | None = None,
        id: str | None = None,  # noqa: A002 - Textual's keyword
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.policy = policy
        """The policy as edited so far (always valid)."""
        self.specs = policy_fields()
        self._by_id = {spec.widget_id: spec for spec in self.specs}
        self._timer: Timer | None = None
        self._pending = False
        self.errors: dict[str, str] = {}
        """Field path -> validation message of the fields whose text is invalid right now."""
        self._built: set[str | None] = {None}
        """Sections whose fields are mounted: the general one from the start, the others the
        first time they open (a form of ~60 fields takes seconds to mount at once)."""

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Vertical(id="pp-header"):
            with Horizontal(id="pp-title-row"):
                yield Label("Policy", id="pp-title")
                yield Label("", id="pp-modified")
            with Horizontal(id="pp-preset-row"):
                yield Label("preset", id="pp-preset-label")
                yield Select(
                    [(name, name) for name in PRESETS],
                    prompt="(custom)",
                    value=preset_of(self.policy) or Select.BLANK,
                    allow_blank=True,
                    compact=True,
                    id="pp-preset",
                )
            yield Static("", id="pp-preset-help", markup=False)
            with Horizontal(id="pp-buttons"):
                yield Button("Save TOML ^s", id="pp-save", compact=True)
                yield Button("Load TOML ^o", id="pp-load", compact=True)
        with VerticalScroll(id="pp-fields"):
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

    def on_resize(self) -> None:
        self.set_class(self.size.height < self.SHORT_ROWS, "-short")

    def focus(self, scroll_visible: bool = True) -> PolicyPanel:
        """Focus the preset switcher (the panel itself takes no focus)."""
        self.query_one("#pp-preset", Select).focus(scroll_visible)
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
            self.query_one("#pp-preset", Select).value = preset_of(policy) or Select.BLANK
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

    def _refresh_header(self) -> None:
        policy = self.policy
        marker = self.query_one("#pp-modified", Label)
        name = preset_of(policy)
        modified = is_modified(policy)
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
        if value == event.select.value and isinstance(value, str) and value in PRESETS:
            self.switch_preset(value)

    def switch_preset(self, name: str) -> None:
        """Load preset ``name`` (keeping the LLM settings and window override) and apply it."""
        preset = get_preset(name)
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

    def action_save(self) -> None:
        """Ask for a path and write the policy there as TOML."""

        def chosen(path: str | None) -> None:
            if path:
                self.save_to(path)

        self.app.push_screen(
            PolicyPathPrompt(
                "Save the policy as TOML",
                f"{self.policy.name or 'policy'}.toml",
                "Enter saves (replacing an existing file), Esc cancels. "
                "API keys are never written, only the name of their variable.",
            ),
            chosen,
        )

    def action_load(self) -> None:
        """Ask for a path and load a TOML policy from it."""

        def chosen(path: str | None) -> None:
            if path:
                self.load_from(path)

        self.app.push_screen(
            PolicyPathPrompt(
                "Load a policy from TOML",
                "",
                'Enter loads, Esc cancels. A file may start from a preset: base = "pi".',
            ),
            chosen,
        )

    def save_to(self, path: str) -> bool:
        """Write the policy to ``path``; a failure is a notification. Returns success."""
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
