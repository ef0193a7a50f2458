"""The stories the samples tell, as format-neutral scripts (see :mod:`_script`)."""

from __future__ import annotations

import random
from collections.abc import Callable

import _project as P
from _script import THOUGHTS, Scenario

FIXTURE = "tests/fixtures/webhook_payloads.json"

CLOCK_EDIT_OLD = """    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.client = client or httpx.Client(timeout=settings.webhook_timeout_s)
        self.sleep = sleep
"""

DELAYS_OLD = """            started = time.monotonic()
            if last_attempt_end is not None:
                # measured, not computed: this is what the schedule test asserts on
                result.delays.append(round(started - last_attempt_end, 3))
"""
DELAYS_NEW = """            started = self.clock()
"""
SLEEP_OLD = """                self.sleep(delay)
                last_attempt_end = finished
"""
SLEEP_NEW = """                result.delays.append(delay)
                self.sleep(delay)
"""
CACHE_OLD = """        if key in _DELIVERY_CACHE:"""
CACHE_NEW = """        if key in self.cache:"""
CACHE_SET_OLD = """                _DELIVERY_CACHE[key] = finished"""
CACHE_SET_NEW = """                self.cache[key] = finished"""
FINISHED_OLD = """            finished = time.monotonic()"""
FINISHED_NEW = """            finished = self.clock()"""

CONFTEST_OLD = """@pytest.fixture
def store():"""
CONFTEST_NEW = '''@pytest.fixture(autouse=True)
def _fresh_delivery_cache():
    """Deliveries recorded by one test must not suppress another test's deliveries."""
    from parcelhub import webhooks

    webhooks._DELIVERY_CACHE.clear()
    yield
    webhooks._DELIVERY_CACHE.clear()


@pytest.fixture
def store():'''


def fix_flaky_test(sc: Scenario, *, with_npm: bool = True) -> None:
    """The diagnosis-and-fix story both Claude samples start with."""
    rng = sc.rng
    sc.thoughts = THOUGHTS
    sc.local("/model", "sonnet", "Set model to Sonnet 4.5 (claude-sonnet-4-5-20250929)")
    sc.prompt(
        "CI has been red on and off for two days because of tests/test_webhooks.py. It fails "
        "maybe one run in five and never on my machine. Can you find out why and fix it "
        "properly? No retries, no sleeps.",
        think=4,
    )
    sc.call(
        "I'll start with the test file and the dispatcher it exercises.",
        sc.read("tests/test_webhooks.py"),
        sc.read("parcelhub/webhooks.py"),
        thinking="The user wants the root cause of a flaky test, not a retry. Two files first: the "
        "tests and WebhookDispatcher. Then the CI workflow, since it only fails there.",
    )
    sc.call("Now the CI workflow, since it only fails there.", sc.read(".github/workflows/ci.yml"))
    sc.call(
        "CI runs with `-p randomly`, so test order changes every run. Let me see who else "
        "touches the delivery cache.",
        sc.grep("_DELIVERY_CACHE"),
        thinking="pytest-randomly reorders tests. The dispatcher keeps _DELIVERY_CACHE at module "
        "level; if another test delivers evt_0005 first, the duplicate test sees a cache hit on "
        "its *first* delivery.",
    )
    sc.call("Baseline in the default order first.", sc.pytest("tests/test_webhooks.py"))
    seed = 2718281828
    sc.call(
        "Passes in file order. Now with random order and repetitions, like CI.",
        sc.pytest(
            "tests/test_webhooks.py",
            count=20,
            seed=seed,
            failures={
                "tests/test_webhooks.py::test_duplicate_delivery_is_suppressed[7-20]": "duplicate",
                "tests/test_webhooks.py::test_retry_schedule_is_exponential[statuses1-13-20]": "schedule",
            },
        ),
    )
    sc.call(
        "Reproduced both failure modes. Checking the shared fixtures and settings before I change "
        "anything.",
        sc.read("tests/conftest.py"),
        sc.read("parcelhub/config.py"),
    )
    sc.repo.files[FIXTURE] = P.webhook_fixture_json(
        random.Random(rng.random()), target_chars=27_500
    )
    sc.call(
        "The contract tests use recorded payloads; let me make sure they don't reuse the event ids "
        "the unit tests use.",
        sc.bash(f"cat {FIXTURE}", sc.repo.read(FIXTURE), description="Show the recorded payloads"),
    )
    sc.call(
        "They don't (their ids are `evt_000001`-style). So there are two independent causes:\n\n"
        "1. `test_retry_schedule_is_exponential` compares delays *measured* with "
        "`time.monotonic()` against exact values, so any scheduling jitter on a loaded runner "
        "fails it.\n2. `test_duplicate_delivery_is_suppressed` depends on the module-level "
        "`_DELIVERY_CACHE`, which leaks between tests; with random order, an earlier test can "
        "already have delivered `evt_0005`.\n\nFixing both: inject a clock and record the computed "
        "delay, and give each test a clean cache.",
        sc.edit("parcelhub/webhooks.py", CLOCK_EDIT_OLD, P.WEBHOOKS_PY_FIXED_CLOCK),
        thinking=rng.choice(THOUGHTS[:3]),
    )
    sc.call("", sc.edit("parcelhub/webhooks.py", DELAYS_OLD, DELAYS_NEW))
    sc.call("", sc.edit("parcelhub/webhooks.py", SLEEP_OLD, SLEEP_NEW))
    sc.call(
        "",
        sc.edit("parcelhub/webhooks.py", CACHE_OLD, CACHE_NEW),
        sc.edit("parcelhub/webhooks.py", CACHE_SET_OLD, CACHE_SET_NEW),
    )
    sc.call("", sc.edit("parcelhub/webhooks.py", FINISHED_OLD, FINISHED_NEW))
    sc.call(
        "And the autouse fixture so no test inherits another's deliveries.",
        sc.edit("tests/conftest.py", CONFTEST_OLD, CONFTEST_NEW),
    )
    sc.call(
        "Same seed that failed before:", sc.pytest("tests/test_webhooks.py", count=20, seed=seed)
    )
    sc.call("And a different seed plus the whole suite.", sc.pytest("", count=3, seed=31415))
    sc.call(
        "Both causes are fixed and the suite is green across seeds:\n\n"
        "- `WebhookDispatcher` takes a `clock` (default `time.monotonic`) and a `cache`; the "
        "delays list now records the backoff it *scheduled*, which is what the test means.\n"
        "- `tests/conftest.py` clears the delivery cache around every test.\n\n"
        "No retries or sleeps were added."
    )
    if with_npm:
        sc.prompt(
            "Nice. The dashboard job failed on the same CI run; can you check that `npm ci && npm "
            "run build` still works in web/?"
        )
        sc.call(
            "Running the dashboard install and build.",
            sc.bash(
                "cd web && npm ci --loglevel=http && npm run build",
                P.npm_install_log(random.Random(rng.random()), max_chars=29_400),
                seconds=48.0,
                description="Install and build the dashboard",
            ),
        )
        sc.repo.files["web/package-lock.json"] = P.package_lock(random.Random(rng.random()))
        sc.call(
            "Installed and built. Let me check the lockfile entries of the packages that warned.",
            sc.read("web/package-lock.json"),
        )
        sc.call(
            "The build works locally: all packages installed and vite finished. The CI failure "
            "was most likely a registry timeout; the only warnings are deprecated transitive "
            "packages and the large-chunk notice, which were there before."
        )


def overflow(seed: int, ci_tokens: int) -> Scenario:
    """Claude Code: fix the flaky test, then a CI job log fills the 200k window."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    fix_flaky_test(sc)
    sc.prompt(
        "While CI catches up: look over the orders and store modules for the same kind of "
        "problem (shared state, time-dependent tests). Just report, don't change anything yet."
    )
    sc.thoughts = [
        "orders.py reads the wall clock only in _now(); no test compares that value exactly.",
        "MemoryStore is built per test by the fixture, so its state cannot leak between tests.",
        "The router module holds no mutable state besides the APIRouter itself.",
        "next_id uses an itertools counter per store instance; fine as long as stores are per test.",
    ]
    sc.routine_until(106_000, big=0.5, parallel=0.45)
    sc.call(
        "Review done. The orders and store code has no module-level state apart from the "
        "router; `MemoryStore` is created per test by the fixture. `_now()` in orders.py reads "
        "the wall clock, but no test compares its value exactly, so it is not a flake risk today."
    )
    sc.prompt(
        "CI run 4821 on main just failed again, but I think that ran before your branch was "
        "pushed. Pull the full job log and confirm it's the same two tests."
    )
    log = P.ci_job_log(
        random.Random(seed * 7 + 1),
        job="test (3.12)",
        run_id=4821,
        target_tokens=ci_tokens,
        chars_per_token=3.5,
    )
    sc.call(
        "Fetching the job log.",
        sc.mcp(
            "mcp__ci__get_job_log",
            {"repo": "acme-logistics/parcelhub", "run_id": 4821, "job": "test (3.12)"},
            log,
            seconds=6.5,
        ),
    )
    sc.call(
        "Same two tests fail in run 4821: `test_duplicate_delivery_is_suppressed[7-12]` and "
        "`test_retry_schedule_is_exponential[statuses1-3-12]`. Let me confirm that run predates "
        "the fix branch.",
        sc.bash(
            "git log origin/main --oneline -5",
            "\n".join(
                f"{P.hexid(rng, 7)} {s}"
                for s in [
                    "tracking: poll every 15 min",
                    "deps: bump httpx",
                    "orders: cursor pagination",
                    "ci: cache pip",
                    "webhooks: sign payloads",
                ]
            ),
            description="Recent main commits",
        ),
        thinking="The log shows the same two failures. I need to check whether run 4821 was on a "
        "commit before the fix was pushed; the commit list on origin/main tells me.",
    )
    sc.api_error(
        'API Error: 400 {"type":"error","error":{"type":"invalid_request_error","message":'
        '"prompt is too long: {tokens} tokens > 200000 maximum"},"request_id":"{request_id}"}'
    )
    return sc


CACHE_MODULE = '''"""Where the dispatcher remembers deliveries it already made."""

from __future__ import annotations

import time
from typing import Protocol


class DeliveryCache(Protocol):
    def seen(self, sub_id: str, event_id: str) -> bool: ...
    def mark(self, sub_id: str, event_id: str) -> None: ...


class MemoryDeliveryCache:
    """Per-process cache; one per app, so tests and workers never share it by accident."""

    def __init__(self, ttl_s: float = 86_400.0, clock=time.monotonic) -> None:
        self._seen: dict[tuple[str, str], float] = {}
        self._ttl = ttl_s
        self._clock = clock

    def seen(self, sub_id: str, event_id: str) -> bool:
        at = self._seen.get((sub_id, event_id))
        return at is not None and self._clock() - at < self._ttl

    def mark(self, sub_id: str, event_id: str) -> None:
        self._seen[(sub_id, event_id)] = self._clock()


class RedisDeliveryCache:
    """Shared between workers: SET NX with a TTL, one key per (subscription, event)."""

    def __init__(self, client, ttl_s: int = 86_400, prefix: str = "parcelhub:dlv:") -> None:
        self._r = client
        self._ttl = ttl_s
        self._prefix = prefix

    def _key(self, sub_id: str, event_id: str) -> str:
        return f"{self._prefix}{sub_id}:{event_id}"

    def seen(self, sub_id: str, event_id: str) -> bool:
        return bool(self._r.exists(self._key(sub_id, event_id)))

    def mark(self, sub_id: str, event_id: str) -> None:
        self._r.set(self._key(sub_id, event_id), "1", ex=self._ttl, nx=True)
'''

_LONG_ASKS = [
    "Check that the carrier code table still maps every DHL code we saw last week.",
    "Is anything still importing the old module-level cache?",
    "Run the order tests again, I changed the fixture.",
    "What does the pack endpoint do with an empty parcels list?",
    "Find where we build the tracking poll interval and tell me the default.",
    "Does anything call Settings.from_env twice on startup?",
    "Look at the label endpoint error when there are no parcels.",
    "Which tests cover cancellation?",
    "Make sure the store sorts orders by id everywhere.",
    "Confirm the webhook signature header name matches the docs.",
    "Check the cursor pagination once more with limit=1.",
    "Any TODOs left in parcelhub/?",
]


def compacted(seed: int) -> Scenario:
    """Claude Code: the flaky-test fix, then a refactor long enough for an automatic compaction,
    then a manual ``/compact`` with instructions."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    fix_flaky_test(sc)
    sc.prompt(
        "Good. Next step: the delivery cache shouldn't be module level at all. Make it per app "
        "(created in create_app), behind a small interface, with an optional Redis backend for "
        "when we run several workers. Keep the tests green."
    )
    sc.call(
        "I'll add a `DeliveryCache` protocol with an in-memory and a Redis implementation.",
        sc.write("parcelhub/delivery_cache.py", CACHE_MODULE),
        thinking="A protocol with seen/mark keeps the dispatcher ignorant of the backend. The "
        "Redis one uses SET NX EX so two workers racing on the same event still post once.",
    )
    sc.thoughts = [
        "create_app is the one place that knows about the environment; build the cache there.",
        "The Redis cache needs a TTL, otherwise keys for old events accumulate forever.",
        "Tests should get a fresh MemoryDeliveryCache from the app fixture instead of clearing a global.",
        "The worker process builds its own app, so it gets the Redis cache from the same settings.",
    ]
    sc.routine_until(108_000, big=0.6, parallel=0.5)
    sc.prompt("How far along are you? Also run the whole suite once with a random seed.")
    sc.call("Running the full suite with a fresh seed.", sc.pytest("", count=2, seed=8675309))
    sc.routine_until(144_000, big=0.6, parallel=0.5)
    sc.call(
        "The per-app cache is wired in: `create_app` builds a `MemoryDeliveryCache` unless "
        "`PARCELHUB_REDIS_URL` is set, and the dispatcher takes it as a constructor argument. "
        "All tests pass with random order."
    )
    sc.prompt("Let's add a test for the Redis cache using a fake client, then I'll review.")
    sc.routine_until(156_000, big=0.6, parallel=0.5)
    sc.compact("keep the Redis cache design and any failing tests; drop the exploration")
    sc.prompt("Now write the changelog entry for 0.15.0 and stop there.")
    sc.routine(4)
    sc.call(
        "Added the 0.15.0 changelog entry: per-app delivery cache with an optional Redis "
        "backend, and deterministic webhook tests (injected clock, isolated cache)."
    )
    return sc


def long_session(seed: int, n_prompts: int, *, tiny: bool = False) -> Scenario:
    """Claude Code: a long day of small requests — thousands of short messages."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    for k in range(n_prompts):
        sc.prompt(rng.choice(_LONG_ASKS), think=rng.uniform(10, 240))
        sc.routine(rng.randint(4, 10), light=True, tiny=tiny)
        if k % 9 == 4 and not tiny:
            sc.routine(1, big=0.0, parallel=0.0)
        sc.call(
            rng.choice(
                [
                    "Done, nothing unexpected.",
                    "Checked; it behaves as described.",
                    "All good; no change needed.",
                    "Fixed and verified with the targeted test.",
                    "That works. One test covers it already.",
                ]
            ),
            seconds=rng.uniform(2, 5),
        )
        if k % 40 == 39:
            sc.pause(rng.uniform(20, 90))
    return sc


def live(seed: int) -> Scenario:
    """Claude Code: a short session that keeps growing (the live-tail sample)."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    sc.prompt(
        "Add a test for GET /v1/orders/{id}/events and make sure events come oldest first.", think=3
    )
    sc.call("Looking at the route first.", sc.read("parcelhub/orders.py", 150, 24))
    sc.call("And how the store returns events.", sc.read("parcelhub/store.py", 45, 12))
    sc.routine(3, light=True)
    sc.call(
        "Adding the test.",
        sc.edit(
            "tests/test_orders.py",
            "import pytest\n",
            "import pytest\n\n\ndef test_events_oldest_first(client):\n"
            "    order = _order(client)\n"
            "    client.post(f\"/v1/orders/{order['id']}/place\")\n"
            "    client.post(f\"/v1/orders/{order['id']}/cancel\")\n"
            "    kinds = [e['kind'] for e in client.get(f\"/v1/orders/{order['id']}/events\").json()]\n"
            "    assert kinds == ['order.placed', 'order.cancelled']\n",
        ),
    )
    sc.routine(6, light=True)
    sc.call("The new test passes; events come back in insertion order, which is oldest first.")
    sc.prompt("Run the whole orders file too.")
    sc.call("Running tests/test_orders.py.", sc.pytest("tests/test_orders.py"))
    sc.routine(8, light=True)
    sc.call("All order tests pass.")
    sc.prompt("Thanks. Last thing: grep for any remaining print() calls.")
    sc.call("Searching.", sc.grep(r"print\("))
    sc.routine(5, light=True)
    sc.call("No print() calls left in parcelhub/ or tests/.")
    return sc


STORE_LIST_OLD = """    def list_orders(self, *, after: str | None, limit: int) -> list[Order]:
        ids = sorted(self._orders)
        if after is not None:
            ids = [i for i in ids if i > after]
        return [self._orders[i] for i in ids[:limit]]
"""
STORE_LIST_NEW = """    def list_orders(
        self,
        *,
        after: str | None,
        limit: int,
        status: str | None = None,
        created_after: str | None = None,
        created_before: str | None = None,
    ) -> list[Order]:
        orders = [self._orders[i] for i in sorted(self._orders)]
        if status is not None:
            orders = [o for o in orders if o.status == status]
        if created_after is not None:
            orders = [o for o in orders if o.created_at >= created_after]
        if created_before is not None:
            orders = [o for o in orders if o.created_at < created_before]
        if after is not None:
            orders = [o for o in orders if o.id > after]
        return orders[:limit]
"""
ROUTE_OLD = '''    after: str | None = None,
    limit: int = Query(50, ge=1, le=500),
) -> dict[str, object]:
    """List orders, oldest first, with cursor pagination."""
    store = request.app.state.store
    orders = store.list_orders(after=after, limit=limit + 1)
'''
ROUTE_NEW = '''    after: str | None = None,
    limit: int = Query(50, ge=1, le=500),
    status: str | None = Query(None, pattern="^(draft|placed|packed|shipped|delivered|cancelled)$"),
    created_after: str | None = None,
    created_before: str | None = None,
) -> dict[str, object]:
    """List orders, oldest first, with cursor pagination and optional filters."""
    store = request.app.state.store
    orders = store.list_orders(
        after=after,
        limit=limit + 1,
        status=status,
        created_after=created_after,
        created_before=created_before,
    )
'''
FILTER_TESTS = """

def test_filter_by_status(client):
    a = _order(client)
    _order(client)
    client.post(f"/v1/orders/{a['id']}/place")
    page = client.get("/v1/orders", params={"status": "placed"}).json()
    assert [o["id"] for o in page["items"]] == [a["id"]]


def test_filter_rejects_unknown_status(client):
    assert client.get("/v1/orders", params={"status": "lost"}).status_code == 422


def test_filtered_pages_keep_cursor(client):
    ids = [_order(client)["id"] for _ in range(5)]
    for i in ids[::2]:
        client.post(f"/v1/orders/{i}/place")
    first = client.get("/v1/orders", params={"status": "placed", "limit": 2}).json()
    rest = client.get("/v1/orders", params={"status": "placed", "after": first["next"]}).json()
    assert [o["id"] for o in first["items"] + rest["items"]] == ids[::2]
"""

CODEX_SUMMARY = """## Checkpoint

### Goal
Add status and created-date filters to GET /v1/orders in both stores, keep cursor pagination, regenerate the dashboard client and make `mypy --strict parcelhub` pass.

### Done
- MemoryStore.list_orders and PostgresStore.list_orders accept status / created_after / created_before
- route parameters validated with Query(); tests for each filter and for paging through a filtered list
- dashboard client regenerated; `npm run build` passes

### In progress
- mypy --strict: the remaining errors are in orders.py (untyped request bodies) and store.py (psycopg rows)

### Decisions
- filters apply before the cursor, so `next` stays stable
- request bodies become TypedDicts rather than pydantic models, to keep the change small

### User requests so far
{user_requests}

### Next
1. finish the TypedDicts in orders.py
2. cast psycopg rows in store.py
3. run mypy and the full test suite"""


def codex_filters(seed: int) -> Scenario:
    """Codex: add filters to the orders API, rebuild the dashboard, then fight mypy --strict until
    the context crosses Codex's 90 % limit and it compacts mid-turn."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    sc.thoughts = [
        "Filters have to apply before the cursor, otherwise a page can end early and `next` skips rows.",
        "The Postgres store needs the same filters in SQL; keep the parameter names identical to the route.",
        "Most mypy errors come from untyped request bodies; a TypedDict per endpoint fixes them without pydantic.",
        "psycopg returns rows as tuples of Any; cast where they enter the domain objects, not everywhere.",
        "The dashboard client is generated from the OpenAPI schema, so the route's Query() names matter.",
    ]
    sc.repo.files["web/package-lock.json"] = P.package_lock(random.Random(seed + 1))
    sc.prompt(
        "Add status and created_after/created_before filters to GET /v1/orders, in both stores, "
        "with tests. Cursor pagination must keep working on filtered lists.",
        think=5,
    )
    sc.call(
        "",
        sc.glob("*.py", sorted(p for p in sc.repo.files if p.endswith(".py"))),
        thinking="Find the route, the store protocol and the existing tests first.",
    )
    sc.call("", sc.read("parcelhub/orders.py"), sc.read("parcelhub/store.py"))
    sc.call("", sc.grep("list_orders"), sc.read("tests/test_orders.py"))
    sc.call("Baseline before changing anything.", sc.pytest("tests/test_orders.py"))
    sc.call(
        "Filtering in MemoryStore before the cursor, so `next` stays stable.",
        sc.edit("parcelhub/store.py", STORE_LIST_OLD, STORE_LIST_NEW),
        thinking="Apply filters first, then the cursor, then the limit; otherwise a filtered "
        "page could end early and the cursor would skip matching rows.",
    )
    sc.call("", sc.edit("parcelhub/orders.py", ROUTE_OLD, ROUTE_NEW))
    sc.call(
        "", sc.write("tests/test_orders.py", sc.repo.read("tests/test_orders.py") + FILTER_TESTS)
    )
    sc.call("", sc.pytest("tests/test_orders.py"))
    sc.routine_until(62_000, chars_per_token=4.0, big=0.6, parallel=0.5)
    sc.call(
        "Filters are in for both stores, validated in the route, and covered by three new "
        "tests; the full order test file passes."
    )
    sc.prompt("Also regenerate the dashboard API client and make sure the dashboard still builds.")
    npm = sc.bash(
        "cd web && npm ci --loglevel=http && npm run gen:api && npm run build",
        P.npm_install_log(random.Random(seed + 2), max_chars=29_000),
        seconds=52.0,
        description="",
    )
    npm.meta["poll"] = 31877
    sc.call("Installing and building; this takes a minute.", npm)
    sc.call(
        "Checking the lockfile for the generator's version.",
        sc.bash("cat web/package-lock.json", sc.repo.read("web/package-lock.json")),
    )
    sc.routine_until(118_000, chars_per_token=4.0, big=0.6, parallel=0.5)
    sc.call(
        "The client is regenerated (`web/src/api/orders.ts` gained the three query "
        "parameters) and `npm run build` succeeds."
    )
    sc.prompt("CI also runs `mypy --strict parcelhub`. Make that pass.")
    sc.call(
        "",
        sc.bash(
            "mypy --strict parcelhub",
            P.mypy_output(sc.repo, random.Random(seed + 3), 420),
            exit_code=1,
            seconds=14.0,
        ),
    )
    sc.call(
        "A lot of this is in orders.py request bodies. Looking at them.",
        sc.read("parcelhub/orders.py"),
    )
    sc.routine_until(212_000, chars_per_token=4.0, big=0.6, parallel=0.5)
    for k in range(14):
        sc.call(
            "",
            sc.bash(
                "mypy --strict parcelhub",
                P.mypy_output(sc.repo, random.Random(seed + 10 + k), 150 - 10 * k),
                exit_code=1,
                seconds=9.0,
            ),
            sc.read(
                rng.choice(["parcelhub/store.py", "parcelhub/models.py", "parcelhub/orders.py"])
            ),
        )
    sc.routine(6)
    sc.call(
        "mypy --strict is clean: request bodies are TypedDicts, psycopg rows are cast where "
        "they enter the domain objects, and two stale `type: ignore` comments are gone. "
        "Tests still pass."
    )
    sc.prompt("Write the PR description.")
    sc.call(
        "**Order filters and strict typing**\n\n- `GET /v1/orders` takes `status`, "
        "`created_after`, `created_before`; filters apply before the cursor.\n- Both stores "
        "implement the filters; three new API tests.\n- Dashboard client regenerated.\n- "
        "`mypy --strict parcelhub` passes (TypedDict request bodies, typed rows)."
    )
    return sc


ENV_LOADER = '''

def load_dotenv(path: str = ".env") -> dict[str, str]:
    """KEY=VALUE lines of a .env file (comments and blank lines skipped); missing file -> {}."""
    values: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8") as fh:
            for raw in fh:
                line = raw.strip()
                if not line or line.startswith("#") or "=" not in line:
                    continue
                key, _, value = line.partition("=")
                values[key.strip()] = value.strip().strip('"').strip("'")
    except FileNotFoundError:
        pass
    return values
'''

VALIDATE_OLD = """    @property
    def is_test(self) -> bool:
        return self.env == "test"
"""
VALIDATE_NEW = """    @property
    def is_test(self) -> bool:
        return self.env == "test"

    def __post_init__(self) -> None:
        if not 1 <= self.page_size_default <= self.page_size_max:
            raise ValueError("page_size_default must be between 1 and page_size_max")
        for name in ("webhook_timeout_s", "webhook_backoff_base_s", "webhook_backoff_max_s"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive")
        if self.webhook_max_attempts < 1:
            raise ValueError("webhook_max_attempts must be at least 1")
"""

PI_SUMMARY = """## Goal
Let `parcelhub.config.Settings` read a `.env` file besides the environment, and reject invalid values at startup.

## Constraints & Preferences
- No new dependencies (no python-dotenv, no pydantic-settings)
- Environment variables win over `.env`
- Keep `Settings` a frozen dataclass

## Progress
### Done
- [x] `load_dotenv()` in parcelhub/config.py (comments, quotes, missing file)
- [x] `Settings.__post_init__` validates page sizes, timeouts and attempts
- [x] tests for both in tests/test_config.py

### In Progress
- [ ] wiring `.env` into `Settings.from_env()` with the right precedence

### Blocked
- (none)

## Key Decisions
- **Validation in __post_init__**: errors surface at startup, not on first request
- **Strings only from .env**: casting stays in from_env, one code path

## Next Steps
1. merge `.env` values under `os.environ` in `from_env()`
2. document the variables in README
3. run the full suite with random order

## Critical Context
- `Settings.from_env()` casts by `f.type` strings because of `from __future__ import annotations`"""


def pi_config(seed: int, last_total: Callable[[Scenario], int]) -> Scenario:
    """pi: a config refactor in many short turns; the context crosses 200k - 16,384 and pi compacts
    at the end of that turn. ``last_total`` renders the script so far and returns the last
    assistant ``totalTokens``: big outputs stop well before the threshold, so the crossing turn
    lands just past it."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    sc.thoughts = [
        "Environment variables must win over .env, so merge the file first and os.environ on top.",
        "Settings is frozen; __post_init__ can still validate because it only reads fields.",
        "from_env casts by the field's type string because of postponed annotations.",
        "A quoted value may contain '='; partition on the first one only.",
    ]
    sc.prompt(
        "Settings should also read a .env file, and reject nonsense values at startup. "
        "No new dependencies.",
        think=6,
    )
    sc.call(
        "Reading the config module and how it's used.",
        sc.read("parcelhub/config.py"),
        sc.grep("Settings"),
        thinking="Keep Settings a frozen dataclass; validation fits in "
        "__post_init__, which frozen dataclasses still run.",
    )
    sc.call("", sc.read("parcelhub/main.py"), sc.read("tests/conftest.py"))
    sc.call(
        "Adding a tiny .env parser next to Settings.",
        sc.write("parcelhub/config.py", sc.repo.read("parcelhub/config.py") + ENV_LOADER),
    )
    sc.call("And validation.", sc.edit("parcelhub/config.py", VALIDATE_OLD, VALIDATE_NEW))
    sc.call("", sc.pytest(""))
    sc.call("The parser and validation are in; existing tests pass.")
    sc.local(
        "!git diff --stat",
        "",
        " parcelhub/config.py | 37 +++++++++++++++++++++++++++++++++++++\n 1 file changed, 37 insertions(+)",
    )
    asks = [
        "Show me every place that constructs Settings directly.",
        "Does anything rely on webhook_max_attempts being 0 to disable retries?",
        "What happens with a quoted value containing '=' in .env?",
        "Run the webhook tests with random order a few times.",
        "Is page_size_max used anywhere besides the route?",
        "Check the CI workflow still installs the package the same way.",
        "Look at how the dashboard reads its API base URL; does it need a .env too?",
        "Print the lockfile entry for vite.",
        "What does mypy say about config.py now?",
        "Double-check the tracking poll interval default.",
    ]
    k = 0
    while (total := last_total(sc)) <= 200_000 - 16_384 or k < 4:
        sc.prompt(asks[k % len(asks)])
        if total > 165_000:
            sc.routine(rng.randint(1, 3), big=0.0, parallel=0.0)
        elif k == 2:
            sc.call(
                "", sc.bash("cat web/package-lock.json", P.package_lock(random.Random(seed + k)))
            )
        elif k == 6:
            sc.repo.files["web/package-lock.json"] = P.package_lock(random.Random(seed + k))
            sc.call("", sc.read("web/package-lock.json"))
        elif k % 4 == 0:
            sc.call(
                "",
                sc.bash(
                    "python -m pytest -vv -p randomly --count=4",
                    P.ci_job_log(
                        random.Random(seed + k),
                        job="local",
                        run_id=0,
                        target_tokens=9_000,
                        chars_per_token=3.5,
                    ),
                ),
            )
        if total <= 165_000:
            sc.routine(rng.randint(2, 5), big=0.4)
        sc.call(
            rng.choice(
                [
                    "Done; nothing else depends on it.",
                    "Checked, it's fine as is.",
                    "Answered above; no change needed.",
                    "That works as expected.",
                ]
            )
        )
        k += 1
    sc.prompt("OK, now wire .env into from_env: environment variables win over the file.")
    sc.call("", sc.read("parcelhub/config.py"))
    sc.call(
        "",
        sc.edit(
            "parcelhub/config.py",
            '        values = {}\n        for f in fields(cls):\n            raw = os.environ.get(f"PARCELHUB_{f.name.upper()}")',
            '        values = {}\n        merged = {**load_dotenv(), **os.environ}\n        for f in fields(cls):\n            raw = merged.get(f"PARCELHUB_{f.name.upper()}")',
        ),
    )
    sc.call("", sc.pytest(""))
    sc.routine(4)
    sc.call(
        "`.env` values now sit under the environment: `from_env()` merges `load_dotenv()` "
        "first and `os.environ` on top. Tests pass."
    )
    sc.prompt("Add a line about it to the README and we're done.")
    sc.routine(3)
    sc.call("README updated with the `.env` support and the precedence rule.")
    return sc


OPENCODE_SUMMARY = """## What we did so far

**Task**: some orders in the dashboard's order list showed "Invalid Date".

**Cause**: `web/src/lib/dates.ts` built dates with `new Date(value)`. Orders imported from the old system have `created_at` without seconds (`2026-03-13T17:02Z`), which the browser's Date parser rejects, and date-fns' `format` then throws or prints "Invalid Date".

**Done**
- `formatDay`/`formatTime` now use `parseISO` (date-fns), which accepts the short form.
- Added a test for the short form in `web/src/lib/dates.test.ts`; vitest passes.
- `npm run build` passes; Python suite passes.
- Reviewed the other date uses in the dashboard (`ago()` already used `parseISO`).

**In progress**
- Normalising `created_at` on the API side so new clients never see the short form (`parcelhub/orders.py::_now` is fine; the importer in `scripts/import_legacy.py` is not).

**Next**
1. Fix the importer to write full ISO timestamps.
2. Add a migration note to the changelog."""


def opencode_dates(seed: int, crossed: Callable[[Scenario], bool]) -> Scenario:
    """opencode: fix 'Invalid Date' in the dashboard; pruning clears old outputs as it goes and an
    automatic compaction happens when a step reaches the usable window."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    sc.thoughts = [
        "parseISO accepts the short ISO form without seconds; new Date() does not everywhere.",
        "The API writes created_at with isoformat(timespec='seconds'), so only imported rows are short.",
        "The zod schema only checks that created_at is a string; validating the format there would surface bad rows early.",
    ]
    sc.prompt(
        "Some orders show 'Invalid Date' in the dashboard's order list. Can you find out why "
        "and fix it?",
        think=8,
    )
    sc.call(
        "I'll look at the orders page and the date helpers.",
        sc.glob("web/src/**/*.ts*", sorted(p for p in sc.repo.files if p.startswith("web/src/"))),
    )
    sc.call("", sc.read("web/src/pages/Orders.tsx"), sc.read("web/src/lib/dates.ts"))
    sc.call("", sc.grep("formatDay|formatTime"), sc.read("web/src/api/orders.ts"))
    sc.call(
        "Running the frontend tests.",
        sc.bash(
            "cd web && npx vitest run",
            P.vitest_output(rng, True),
            exit_code=1,
            description="Run frontend tests",
        ),
        thinking="The second formatDay test uses a timestamp without seconds. new Date() is "
        "lenient in V8 but not everywhere; parseISO handles that form.",
    )
    sc.call(
        "`new Date()` rejects the short ISO form some imported orders have. Switching to `parseISO`.",
        sc.edit(
            "web/src/lib/dates.ts",
            '  return format(new Date(value), "d MMM yyyy");',
            '  return format(parseISO(value), "d MMM yyyy");',
        ),
        sc.edit(
            "web/src/lib/dates.ts",
            '  return format(new Date(value), "HH:mm");',
            '  return format(parseISO(value), "HH:mm");',
        ),
    )
    sc.call(
        "",
        sc.bash(
            "cd web && npx vitest run",
            P.vitest_output(rng, False),
            description="Run frontend tests",
        ),
    )
    sc.call(
        "Fixed: the date helpers now parse with `parseISO`, which accepts timestamps without "
        "seconds. The previously failing test passes."
    )
    sc.prompt("Run the full frontend build and the Python tests too.")
    sc.call(
        "",
        sc.bash(
            "cd web && npm ci --loglevel=http && npm run build",
            P.npm_install_log(random.Random(seed + 1), max_chars=60_000),
            seconds=40.0,
            description="Install and build the dashboard",
        ),
    )
    sc.call("", sc.pytest(""))
    sc.call("Both pass.")
    reviews = [
        "Review the rest of the dashboard for other date parsing.",
        "Where does created_at get written on the API side?",
        "Look at the orders API client and its zod schema.",
        "Is the status badge CSS covering every status?",
        "Check the store for any other timestamp handling.",
        "Do the webhook payloads carry created_at too?",
        "Go over the config defaults once more.",
    ]
    for n, ask in enumerate(reviews):
        sc.prompt(ask)
        sc.routine(rng.randint(5, 8), big=0.8, parallel=0.5)
        if n % 2:
            sc.call("", sc.read("parcelhub/carrier_codes.py"))
        else:
            sc.call(
                "",
                sc.bash(
                    f"gh run view {4780 + n} --log",
                    P.ci_job_log(
                        random.Random(seed + 20 + n),
                        job="test (3.12)",
                        run_id=4780 + n,
                        target_tokens=6_000,
                        chars_per_token=4.0,
                    ),
                    description="CI log of an earlier run",
                ),
            )
        sc.call(
            rng.choice(
                [
                    "Nothing else parses dates by hand.",
                    "That path is fine.",
                    "Reviewed; no change needed there.",
                    "Found nothing unusual.",
                ]
            )
        )
    sc.prompt(
        "Now check the legacy importer and everything it touches: the fixtures, the "
        "lockfile pins for date-fns, the CI logs of the last import run."
    )
    heavy = [
        lambda: sc.bash(
            "cat web/package-lock.json",
            P.package_lock(random.Random(seed + 7)),
            description="Show the lockfile",
        ),
        lambda: sc.bash(
            f"cat {FIXTURE}",
            P.webhook_fixture_json(random.Random(seed + 8), target_chars=26_000),
            description="Show the recorded payloads",
        ),
        lambda: sc.bash(
            "gh run view 4790 --log",
            P.ci_job_log(
                random.Random(seed + 9),
                job="import",
                run_id=4790,
                target_tokens=11_000,
                chars_per_token=4.0,
            ),
            description="CI log",
        ),
        lambda: sc.read("parcelhub/carrier_codes.py"),
        lambda: sc.read("parcelhub/models.py"),
        lambda: sc.read("parcelhub/orders.py"),
    ]
    k = 0
    while not crossed(sc):
        sc.call(
            rng.choice(["", "", "Next, the importer's inputs.", "Checking this too."]),
            heavy[k % len(heavy)](),
        )
        k += 1
    sc.routine(3)
    sc.call("The importer is the only writer of short timestamps; the fixtures and pins are fine.")
    sc.prompt("Good. Fix the importer so it writes full ISO timestamps.")
    sc.routine(4)
    sc.call("The importer now writes `isoformat(timespec='seconds')` with an explicit UTC offset.")
    return sc


def opencode_small(seed: int) -> Scenario:
    """opencode (storage folder sample): a short two-prompt session."""
    rng = random.Random(seed)
    sc = Scenario(rng)
    sc.prompt("What does the status badge show for cancelled orders?", think=4)
    sc.call("", sc.grep("status-"), sc.read("web/src/pages/Orders.tsx"))
    sc.call(
        "The badge uses the class `status-cancelled`, with the status text itself as the label "
        '("cancelled"). There is no special icon.'
    )
    sc.prompt("Make the order list show the reference in monospace.")
    sc.call(
        "",
        sc.edit(
            "web/src/pages/Orders.tsx",
            "<td>{o.reference ?? o.id}</td>",
            '<td className="mono">{o.reference ?? o.id}</td>',
        ),
    )
    sc.call(
        "",
        sc.bash(
            "cd web && npx vitest run",
            P.vitest_output(rng, False),
            description="Run frontend tests",
        ),
    )
    sc.call("Done: the reference column has the `mono` class; tests pass.")
    return sc


COMPACTED_SUMMARIES = [
    {
        "analysis": "The session is about the parcelhub service. First the flaky webhook tests were "
        "fixed at the root (injected clock, isolated delivery cache); then the user asked to make "
        "the delivery cache per app, behind an interface, with an optional Redis backend. I went "
        "through the conversation in order and kept what is needed to continue.",
        "intent": "Per-app delivery cache (created in create_app) behind a small interface, with "
        "an optional Redis backend for several workers; keep every test green.",
        "concepts": "   - DeliveryCache protocol (seen / mark); MemoryDeliveryCache with a TTL\n"
        "   - RedisDeliveryCache: SET NX EX per (subscription, event)\n"
        "   - WebhookDispatcher gets the cache injected; tests get a fresh one per app",
        "errors": "   - flaky test_retry_schedule_is_exponential: measured delays → record the "
        "scheduled backoff, clock injected\n   - flaky test_duplicate_delivery_is_suppressed: "
        "module-level cache leaked between tests → cache per dispatcher",
        "solving": "Reproduced the flakes with --count and fixed seeds before changing code; the "
        "new cache module is in parcelhub/delivery_cache.py.",
        "pending": "   - wire the cache through create_app and PARCELHUB_REDIS_URL\n"
        "   - run the full suite with a random seed (the user asked for it)",
        "current": "Wiring MemoryDeliveryCache / RedisDeliveryCache into create_app.",
        "next": "Finish create_app, then `python -m pytest -p randomly`.",
    },
    {
        "analysis": "Continuing after an automatic compaction. The per-app delivery cache is in "
        "place; the user asked for a test of the Redis cache with a fake client and then a review.",
        "intent": "A test for RedisDeliveryCache using a fake client; then stop for review.",
        "concepts": "   - RedisDeliveryCache keys: parcelhub:dlv:<sub>:<event>, SET NX EX\n"
        "   - a fake client with exists / set(nx, ex) is enough for the test",
        "errors": "   - none since the compaction",
        "solving": "All tests pass with random order; create_app picks Redis when "
        "PARCELHUB_REDIS_URL is set.",
        "pending": "   - the changelog entry for 0.15.0",
        "current": "Tests for the Redis cache are written and passing.",
        "next": "Write the changelog entry when the user asks.",
    },
]

LONG_SUMMARY = {
    "analysis": "A long session of small, independent requests about the parcelhub service. "
    "None of them left work in progress.",
    "intent": "Answer the user's list of small checks (carrier codes, cancellation tests, "
    "pagination, config defaults) one at a time.",
    "concepts": "   - orders routes and their status transitions\n"
    "   - MemoryStore ordering and the `after` cursor\n   - Settings defaults and from_env",
    "errors": "   - none",
    "solving": "Each request was answered with a targeted read, grep or a single test run.",
    "pending": "   - none beyond the request in progress",
    "current": "Working through the next request on the user's list.",
    "next": "Continue with the user's next request.",
}
