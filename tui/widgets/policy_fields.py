"""The policy as a form: its editable fields, their kinds, and their values as text.

Generated from the pydantic model (:class:`core.policy.Policy`): one :class:`FieldSpec` per field,
grouped by section (general, truncation, pruning, split, compaction, LLM), each with the field's
docstring as help text. Nothing here draws; :mod:`tui.widgets.policy_panel` does.
"""

from __future__ import annotations

import os
import types
from dataclasses import dataclass
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from core.model.fastmodel import documented
from core.policy import PRESETS, Policy

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
    description = documented(model)[name].description or ""
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


def is_modified(policy: Policy, reference: Policy | None = None) -> bool:
    """A preset-named policy that differs from its preset — or from ``reference``, what its
    name stands for here (the preset as the session's agent version has it) — LLM and window
    settings, and the description, aside."""
    name = preset_of(policy)
    if reference is None:
        if name is None:
            return False
        reference = PRESETS[name]
    exclude = {*PRESERVED_ON_PRESET, "description"}
    return policy.model_dump(exclude=exclude) != reference.model_dump(exclude=exclude)


# -- help for one field ---------------------------------------------------------------------------


def placeholder(spec: FieldSpec) -> str:
    """What an empty Input of this field suggests."""
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


# -- section titles ---------------------------------------------------------------------------------


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
        if sp.mode == "history-share":
            budget = f"newest {sp.tail_ratio:.0%} of the history"
        elif sp.tail_budget_tokens is not None:
            budget = f"tail {sp.tail_budget_tokens:,}"
        else:
            budget = f"tail {sp.tail_ratio:.0%} ({short(sp.tail_min_tokens)}–{short(sp.tail_max_tokens)})"
        return f"{sp.mode}, {budget}"
    if section == "compaction":
        c = policy.compaction
        if not c.auto:
            return f"manual only, {c.strategy}"
        if c.threshold_rule in ("codex", "gemini-cli"):
            rule = f"{c.threshold_rule} {c.codex_ratio:.0%}"
        elif c.threshold_rule == "qwen-code":
            rule = f"qwen-code {c.codex_ratio:.0%} ≤ −{short(c.reserve_tokens + c.autocompact_buffer_tokens)}"
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
