"""A format-neutral script of a coding-agent session, and the scenarios the samples record.

A :class:`Script` is a list of events — a user prompt, a model call (thinking, text, tool uses
with their outputs), a pause, an API error — built by the scenario functions at the bottom
against the fictional :class:`~_project.Repo`. Each format writer (``_claude``, ``_codex``,
``_pi``, ``_opencode``) renders the same kind of script in its own shape, with its own tool
names, its own truncation of big outputs and its own usage accounting.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Any

import _project as P


@dataclass
class Tool:
    """One tool use: what the agent asked for and what the tool printed."""

    kind: str
    """read | bash | grep | glob | edit | write | mcp"""
    args: dict[str, Any]
    output: str
    is_error: bool = False
    exit_code: int = 0
    seconds: float = 0.2
    before: str | None = None
    """edit/write: the whole file before the change (Claude's toolUseResult carries it)."""
    after: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    """Extra facts a writer may need (``total_lines`` of a read file)."""


@dataclass
class Call:
    """One model call and what it produced."""

    text: str = ""
    thinking: str = ""
    tools: list[Tool] = field(default_factory=list)
    seconds: float = 4.0
    """How long the model took to answer."""


@dataclass
class Prompt:
    text: str
    think_seconds: float = 30.0


@dataclass
class Pause:
    """The user stepped away; provider caches expire."""

    minutes: float


@dataclass
class ApiError:
    """The provider refused the call (Claude Code writes a synthetic assistant line)."""

    text: str


@dataclass
class Compact:
    """A manual compaction the user asked for (automatic ones are decided by each writer)."""

    instructions: str = ""


@dataclass
class Local:
    """A local slash command the user ran (``/model``, ``/cost`` …): no model call."""

    command: str
    args: str
    stdout: str


Event = Prompt | Call | Pause | ApiError | Compact | Local


def est(text: str, chars_per_token: float) -> int:
    """Provider-side token count we pretend the model reported for ``text``."""
    return max(1, math.ceil(len(text) / chars_per_token)) if text else 0


# ---------------------------------------------------------------------------------------------
# Scenario building
# ---------------------------------------------------------------------------------------------

_READ_INTROS = [
    "Let me look at `{path}`.",
    "Reading `{path}`.",
    "I'll check `{path}` next.",
    "Opening `{path}` to confirm what it does today.",
]
_READ2_INTROS = [
    "Reading `{a}` and `{b}`.",
    "Let me look at `{a}` and `{b}` together.",
]
_GREP_INTROS = [
    "Searching for every use of `{pattern}`.",
    "Let me find where `{pattern}` is referenced.",
    "Checking which modules touch `{pattern}`.",
]
_MIXED_INTROS = [
    "Reading `{path}` and searching for `{pattern}`.",
    "Let me check `{path}`, and where `{pattern}` is used.",
]
_TEST_INTROS = [
    "Running {scope}.",
    "Let me run {scope} to see where we stand.",
    "Quick check with {scope}.",
]
_GIT_INTROS = {
    "git status --short": "Checking what is modified.",
    "git log --oneline -12": "Looking at recent history.",
    "git diff --stat": "Checking the size of the change so far.",
    "ls -la parcelhub tests": "Listing the package and the tests.",
}
GENERIC_THOUGHTS = [
    "Nothing here contradicts what I found so far; keep going with the next file.",
    "The naming is consistent across modules, so a grep will find every caller.",
    "Check the tests before changing behaviour; they describe what callers rely on.",
    "This module has no shared state; the interesting part is how it is wired in main.py.",
]
THOUGHTS = [
    "The delays are measured with time.monotonic() around real HTTP calls, so scheduler jitter on a busy CI runner ends up in the list the test compares with ==. That explains failures that only show up under load.",
    "The duplicate-suppression test only fails when another test delivered evt_0005 first in the same process. The cache is module level, so test order matters; pytest-randomly shuffles the order on every run.",
    "I should not paper over this with a retry decorator. Injecting a clock and giving each dispatcher its own cache fixes both causes without changing production behaviour.",
    "The store's list_orders is sorted by id, so the cursor can simply be the last id of the page. I need limit + 1 rows to know whether there is a next page.",
    "Before editing, check whether anything else imports _DELIVERY_CACHE directly; if the worker module uses it, the per-instance cache must stay shared in production.",
    "The test log is long but the only failures are the two known flakes; everything else passes consistently across the repetitions.",
    "Settings is frozen, so tests build their own instance; the fixture in conftest already does that for the app, but the webhook tests use a separate settings fixture.",
    "The patch touches two files. I will run the webhook tests with a fixed seed first, then a few random seeds, then the full suite.",
]


class Scenario:
    """Builds a :class:`Script` against a :class:`~_project.Repo` with one seeded RNG."""

    def __init__(self, rng: random.Random, repo: P.Repo | None = None) -> None:
        self.rng = rng
        self.repo = repo or P.Repo()
        self.events: list[Event] = []
        self.thoughts: list[str] = GENERIC_THOUGHTS
        """Reasoning snippets the routine steps may show (set per story)."""
        self.reads: dict[str, int] = {}
        self.modified: list[str] = []
        self._history = [
            f"{P.hexid(rng, 7)} {s}"
            for s in [
                "orders: cursor pagination",
                "webhooks: sign payloads",
                "ci: cache pip",
                "store: postgres upsert",
                "tracking: poll every 15 min",
                "deps: bump httpx",
                "dashboard: recharts 2.15",
                "tests: split order tests",
                "config: carriers env",
                "orders: label endpoint",
                "webhooks: retry on 429",
                "store: memory store lock",
            ]
        ]

    # -- events --------------------------------------------------------------------------

    def prompt(self, text: str, think: float | None = None) -> None:
        self.events.append(Prompt(text, think if think is not None else self.rng.uniform(15, 90)))

    def call(
        self, text: str = "", *tools: Tool, thinking: str = "", seconds: float | None = None
    ) -> Call:
        c = Call(
            text=text,
            thinking=thinking,
            tools=list(tools),
            seconds=seconds if seconds is not None else self.rng.uniform(3.0, 14.0),
        )
        self.events.append(c)
        return c

    def pause(self, minutes: float) -> None:
        self.events.append(Pause(minutes))

    def api_error(self, text: str) -> None:
        self.events.append(ApiError(text))

    def compact(self, instructions: str = "") -> None:
        self.events.append(Compact(instructions))

    def local(self, command: str, args: str, stdout: str) -> None:
        self.events.append(Local(command, args, stdout))

    # -- tools ---------------------------------------------------------------------------

    def read(self, path: str, offset: int | None = None, limit: int | None = None) -> Tool:
        text = self.repo.read(path)
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        start = offset or 1
        chunk = lines[start - 1 : (start - 1 + limit) if limit else None]
        self.reads[path] = self.reads.get(path, 0) + 1
        args: dict[str, Any] = {"path": path}
        if offset:
            args["offset"] = offset
        if limit:
            args["limit"] = limit
        return Tool(
            "read",
            args,
            "\n".join(chunk) + "\n",
            seconds=self.rng.uniform(0.01, 0.08),
            meta={"total_lines": len(lines)},
        )

    def grep(self, pattern: str, prefix: list[str] | None = None) -> Tool:
        hits = self.repo.grep(pattern, prefix)
        out = P.rg_output(hits)
        return Tool(
            "grep",
            {"pattern": pattern, "path": (prefix or ["."])[0]},
            out,
            exit_code=0 if hits else 1,
            seconds=self.rng.uniform(0.05, 0.4),
        )

    def glob(self, pattern: str, files: list[str]) -> Tool:
        return Tool("glob", {"pattern": pattern}, "\n".join(files), seconds=0.05)

    def bash(
        self,
        command: str,
        output: str,
        exit_code: int = 0,
        seconds: float | None = None,
        description: str = "",
    ) -> Tool:
        return Tool(
            "bash",
            {"command": command, "description": description},
            output,
            is_error=exit_code != 0,
            exit_code=exit_code,
            seconds=seconds if seconds is not None else self.rng.uniform(0.1, 3.0),
        )

    def edit(self, path: str, old: str, new: str) -> Tool:
        before = self.repo.read(path)
        self.repo.replace(path, old, new)
        if path not in self.modified:
            self.modified.append(path)
        return Tool(
            "edit",
            {"path": path, "old": old, "new": new},
            "",
            before=before,
            after=self.repo.read(path),
            seconds=0.05,
        )

    def write(self, path: str, content: str) -> Tool:
        before = self.repo.files.get(path)
        self.repo.files[path] = content
        if path not in self.modified:
            self.modified.append(path)
        return Tool(
            "write",
            {"path": path, "content": content},
            "",
            before=before,
            after=content,
            seconds=0.03,
        )

    def mcp(self, name: str, args: dict[str, Any], output: str, seconds: float = 3.0) -> Tool:
        return Tool("mcp", {"name": name, **args}, output, seconds=seconds)

    def pytest(
        self,
        target: str,
        *,
        count: int = 1,
        failures: dict[str, str] | None = None,
        seed: int | None = None,
        extra: str = "",
    ) -> Tool:
        tests = P.test_ids(target if target.startswith("tests/test_") else None)
        log, code = P.pytest_run(self.rng, tests, count=count, failures=failures, seed=seed)
        cmd = f"python -m pytest {target}".rstrip()
        if count > 1:
            cmd += f" --count={count}"
        if seed is not None:
            cmd += f" -p randomly --randomly-seed={seed}"
        if extra:
            cmd += f" {extra}"
        return self.bash(
            cmd,
            log,
            exit_code=code,
            seconds=self.rng.uniform(2.0, 9.0),
            description=f"Run {target or 'all'} tests",
        )

    # -- filler: believable routine steps ------------------------------------------------

    def routine(
        self,
        n_calls: int,
        *,
        big: float = 0.15,
        parallel: float = 0.25,
        light: bool = False,
        tiny: bool = False,
    ) -> None:
        """``n_calls`` ordinary steps: reads, greps, test runs, git commands, small edits.

        ``light`` keeps every output to a few lines (for the long scrolling samples)."""
        if light or tiny:
            for _ in range(n_calls):
                self._light_step(tiny)
            return
        rng = self.rng
        for _ in range(n_calls):
            r = rng.random()
            if r < 0.45:
                first = self._routine_read(big)
                if rng.random() < parallel:
                    second = self._routine_read(big, avoid=first.args["path"])
                    intro = rng.choice(_READ2_INTROS).format(
                        a=first.args["path"], b=second.args["path"]
                    )
                    self._routine_call(intro, first, second)
                else:
                    self._routine_call(
                        rng.choice(_READ_INTROS).format(path=first.args["path"]), first
                    )
            elif r < 0.65:
                grep, pattern = self._routine_grep()
                if rng.random() < parallel:
                    read = self._routine_read(big)
                    intro = rng.choice(_MIXED_INTROS).format(
                        path=read.args["path"], pattern=pattern
                    )
                    self._routine_call(intro, read, grep)
                else:
                    self._routine_call(rng.choice(_GREP_INTROS).format(pattern=pattern), grep)
            elif r < 0.8:
                target = rng.choice(["tests/test_webhooks.py", "tests/test_orders.py", ""])
                scope = f"`{target}`" if target else "the full suite"
                self._routine_call(
                    rng.choice(_TEST_INTROS).format(scope=scope), self.pytest(target)
                )
            elif r < 0.95:
                cmd, out = self._git(rng)
                self._routine_call(
                    _GIT_INTROS[cmd], self.bash(cmd, out, description="Inspect the repository")
                )
            else:
                self._routine_call(
                    "Linting the package.",
                    self.bash(
                        "ruff check parcelhub tests", "All checks passed!", description="Lint"
                    ),
                )

    def _routine_call(self, intro: str, *tools: Tool) -> None:
        rng = self.rng
        thinking = rng.choice(self.thoughts) if rng.random() < 0.25 else ""
        self.call(intro if rng.random() < 0.85 else "", *tools, thinking=thinking)

    def _routine_read(self, big: float, avoid: str | None = None) -> Tool:
        rng = self.rng
        files = [
            p
            for p in sorted(self.repo.files)
            if p.endswith((".py", ".toml", ".yml", ".json", ".ts", ".tsx"))
            and not p.endswith(("package-lock.json", "webhook_payloads.json", "__init__.py"))
            and p != avoid
        ]
        weights = [1.0 / (1 + 2 * self.reads.get(p, 0)) for p in files]
        path = rng.choices(files, weights)[0]
        text = self.repo.read(path)
        if rng.random() < big or len(text) < 2500:
            return self.read(path)
        total = text.count("\n")
        off = rng.randint(1, max(1, total - 40))
        return self.read(path, off, rng.choice([30, 40, 60, 80]))

    def _routine_grep(self) -> tuple[Tool, str]:
        identifiers = [
            "Settings",
            "WebhookDispatcher",
            "MemoryStore",
            "list_orders",
            "OrderEvent",
            "Subscription",
            "deliver_all",
            "next_id",
            "to_dict",
            "from_dict",
            "_emit",
            "backoff",
            "page_size_max",
            "webhook_max_attempts",
            "signature(",
            "HTTPException",
            "get_order",
            "created_at",
        ]
        pattern = self.rng.choice(identifiers)
        return self.grep(re.escape(pattern), ["parcelhub/", "tests/test_", ".github/"]), pattern

    def _light_step(self, tiny: bool = False) -> None:
        rng = self.rng
        files = [p for p in sorted(self.repo.files) if p.endswith(".py")]
        r = rng.random()
        if r < 0.45:
            path = rng.choice(files)
            total = max(1, self.repo.read(path).count("\n"))
            off = rng.randint(1, max(1, total - 6))
            tool = self.read(path, off, rng.randint(1, 2) if tiny else rng.randint(3, 6))
            intro = rng.choice(_READ_INTROS).format(path=path)
        elif r < 0.7:
            pat = rng.choice(
                [
                    "def deliver",
                    "class ",
                    "Settings(",
                    "store.",
                    "import httpx",
                    "status",
                    "raise ",
                    "@router",
                    "to_dict",
                    "next_id",
                ]
            )
            hits = self.repo.grep(re.escape(pat))[: 1 if tiny else rng.randint(1, 3)]
            tool = Tool("grep", {"pattern": pat, "path": "."}, P.rg_output(hits), seconds=0.1)
            intro = rng.choice(_GREP_INTROS).format(pattern=pat)
        elif r < 0.85:
            test = rng.choice(P.test_ids())
            passed = rng.random() < 0.9
            out = (
                f"{test} {'PASSED' if passed else 'FAILED'}\n"
                f"1 {'passed' if passed else 'failed'} in {rng.uniform(0.1, 0.9):.2f}s"
            )
            tool = self.bash(
                f"python -m pytest -q {test}",
                out,
                exit_code=0 if passed else 1,
                description="Run one test",
            )
            intro = rng.choice(_TEST_INTROS).format(scope=test.split("::")[1])
        else:
            cmd, out = rng.choice(
                [
                    ("git status --short", " M parcelhub/webhooks.py"),
                    ("git stash list", ""),
                    ("git branch --show-current", "fix/flaky-webhook-tests"),
                    ("python -c 'import parcelhub; print(parcelhub.__version__)'", "0.14.2"),
                ]
            )
            tool = self.bash(cmd, out, description="Check state")
            intro = "Quick check."
        self.call(intro if rng.random() < 0.2 else "", tool, seconds=rng.uniform(1.5, 5.0))

    def approx_tokens(self, chars_per_token: float = 3.5) -> int:
        """Rough size of everything said so far (what the writers will count, give or take)."""
        chars = 0
        for ev in self.events:
            if isinstance(ev, Prompt):
                chars += len(ev.text)
            elif isinstance(ev, Call):
                chars += len(ev.text) + len(ev.thinking)
                for t in ev.tools:
                    chars += len(t.output) + sum(len(str(v)) for v in t.args.values()) + 40
                    if t.kind == "read":
                        chars += 8 * t.output.count("\n")
        return int(chars / chars_per_token)

    def routine_until(self, tokens: int, *, chars_per_token: float = 3.5, **kw: Any) -> None:
        """Routine steps until :meth:`approx_tokens` reaches ``tokens``."""
        while self.approx_tokens(chars_per_token) < tokens:
            self.routine(1, **kw)

    def _git(self, rng: random.Random) -> tuple[str, str]:
        kind = rng.randrange(4)
        if kind == 0:
            return "git log --oneline -12", "\n".join(self._history)
        if kind == 1:
            return "git status --short", "\n".join(f" M {p}" for p in self.modified)
        if kind == 2:
            rows = [
                f" {p:<28}| {max(1, len(self.repo.read(p)) // 400):>3} {'+' * 6}{'-' * 3}"
                for p in self.modified
            ]
            if self.modified:
                rows.append(f" {len(self.modified)} files changed")
            return "git diff --stat", "\n".join(rows)
        return "ls -la parcelhub tests", "\n".join(
            f"-rw-r--r-- 1 dev dev {len(self.repo.read(p).encode()):>6} Mar 14 08:5{len(p) % 10} {p.split('/')[-1]}"
            for p in sorted(self.repo.files)
            if p.startswith(("parcelhub/", "tests/"))
        )
