"""The made-up repository every sample session works on, and the tool outputs it produces.

``parcelhub`` is a small parcel-tracking web service: a Python API (orders, tracking, webhooks)
with a tiny dashboard built with npm. Its test ``tests/test_webhooks.py`` is flaky for two real
reasons — the retry schedule is measured with the wall clock, and a module-level delivery cache
leaks between tests — which is the bug the Claude Code sessions chase.

Everything here is written for ctxscope's samples; nothing is copied from a real project. All
randomness goes through the ``random.Random`` the caller passes, so the output is deterministic.
"""

from __future__ import annotations

import json
import random
import re
import string
from dataclasses import dataclass, field

ROOT = "/home/dev/src/parcelhub"

# ---------------------------------------------------------------------------------------------
# Hand-written source files
# ---------------------------------------------------------------------------------------------

WEBHOOKS_PY = '''"""Outbound webhooks: deliver order events to subscriber endpoints, with retries."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import httpx

from parcelhub.config import Settings
from parcelhub.models import OrderEvent, Subscription

log = logging.getLogger("parcelhub.webhooks")

# Deliveries we already sent, keyed by (subscription id, event id). Shared by every dispatcher
# in the process so that two workers never post the same event twice.
_DELIVERY_CACHE: dict[tuple[str, str], float] = {}

RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass
class DeliveryAttempt:
    subscription_id: str
    event_id: str
    attempt: int
    status: int | None
    started_at: float
    finished_at: float
    error: str | None = None

    @property
    def duration(self) -> float:
        return self.finished_at - self.started_at


@dataclass
class DeliveryResult:
    delivered: bool
    attempts: list[DeliveryAttempt] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    skipped_duplicate: bool = False


def signature(secret: str, body: bytes) -> str:
    """HMAC-like signature the subscriber checks (sha256 over secret + body)."""
    digest = hashlib.sha256(secret.encode() + body).hexdigest()
    return f"sha256={digest}"


class WebhookDispatcher:
    """Posts events to subscribers and retries with exponential backoff."""

    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        self.client = client or httpx.Client(timeout=settings.webhook_timeout_s)
        self.sleep = sleep

    def backoff(self, attempt: int) -> float:
        base = self.settings.webhook_backoff_base_s
        return min(base * (2 ** (attempt - 1)), self.settings.webhook_backoff_max_s)

    def deliver(self, sub: Subscription, event: OrderEvent) -> DeliveryResult:
        key = (sub.id, event.id)
        if key in _DELIVERY_CACHE:
            log.debug("skip duplicate delivery sub=%s event=%s", sub.id, event.id)
            return DeliveryResult(delivered=True, skipped_duplicate=True)

        body = event.to_json().encode()
        headers = {
            "content-type": "application/json",
            "x-parcelhub-event": event.kind,
            "x-parcelhub-signature": signature(sub.secret, body),
        }
        result = DeliveryResult(delivered=False)
        last_attempt_end = None
        for attempt in range(1, self.settings.webhook_max_attempts + 1):
            started = time.monotonic()
            if last_attempt_end is not None:
                # measured, not computed: this is what the schedule test asserts on
                result.delays.append(round(started - last_attempt_end, 3))
            status: int | None = None
            error: str | None = None
            try:
                response = self.client.post(sub.url, content=body, headers=headers)
                status = response.status_code
            except httpx.TransportError as exc:
                error = f"{type(exc).__name__}: {exc}"
            finished = time.monotonic()
            result.attempts.append(
                DeliveryAttempt(sub.id, event.id, attempt, status, started, finished, error)
            )
            if status is not None and 200 <= status < 300:
                result.delivered = True
                _DELIVERY_CACHE[key] = finished
                log.info("delivered sub=%s event=%s attempt=%d", sub.id, event.id, attempt)
                return result
            if status is not None and status not in RETRYABLE_STATUS:
                log.warning("giving up sub=%s event=%s status=%d", sub.id, event.id, status)
                return result
            if attempt < self.settings.webhook_max_attempts:
                delay = self.backoff(attempt)
                log.debug(
                    "scheduling retry sub=%s event=%s attempt=%d delay=%.3fs",
                    sub.id, event.id, attempt + 1, delay,
                )
                self.sleep(delay)
                last_attempt_end = finished
        log.error("delivery failed sub=%s event=%s after %d attempts", sub.id, event.id,
                  len(result.attempts))
        return result

    def deliver_all(self, subs: Iterable[Subscription], event: OrderEvent) -> list[DeliveryResult]:
        return [self.deliver(sub, event) for sub in subs if sub.wants(event.kind)]
'''

WEBHOOKS_PY_FIXED_CLOCK = """    def __init__(
        self,
        settings: Settings,
        client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        cache: dict[tuple[str, str], float] | None = None,
    ) -> None:
        self.settings = settings
        self.client = client or httpx.Client(timeout=settings.webhook_timeout_s)
        self.sleep = sleep
        self.clock = clock
        self.cache = _DELIVERY_CACHE if cache is None else cache
"""

TEST_WEBHOOKS_PY = """import httpx
import pytest

from parcelhub.config import Settings
from parcelhub.models import OrderEvent, Subscription
from parcelhub.webhooks import WebhookDispatcher, signature


def make_sub(**overrides):
    data = {
        "id": "sub_test",
        "url": "https://hooks.example.test/parcelhub",
        "secret": "s3cret",
        "events": ["order.shipped", "order.delivered"],
    }
    data.update(overrides)
    return Subscription(**data)


def make_event(kind="order.shipped", event_id="evt_0001"):
    return OrderEvent(id=event_id, kind=kind, order_id="ord_42", payload={"carrier": "dhl"})


def transport(statuses):
    calls = []

    def handler(request):
        calls.append(request)
        status = statuses[min(len(calls), len(statuses)) - 1]
        return httpx.Response(status)

    return httpx.MockTransport(handler), calls


@pytest.fixture
def settings():
    return Settings(webhook_max_attempts=4, webhook_backoff_base_s=0.01, webhook_backoff_max_s=1.0)


def test_signature_is_stable():
    assert signature("k", b"{}") == signature("k", b"{}")
    assert signature("k", b"{}").startswith("sha256=")


def test_delivers_on_first_try(settings):
    mock, calls = transport([204])
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    result = dispatcher.deliver(make_sub(), make_event())
    assert result.delivered
    assert len(calls) == 1


def test_retries_on_503_then_succeeds(settings):
    mock, calls = transport([503, 503, 200])
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    result = dispatcher.deliver(make_sub(), make_event(event_id="evt_0002"))
    assert result.delivered
    assert [a.status for a in result.attempts] == [503, 503, 200]


@pytest.mark.parametrize("statuses", [[500, 500, 500, 500], [429, 502, 504, 503]])
def test_retry_schedule_is_exponential(settings, statuses):
    mock, _ = transport(statuses)
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    result = dispatcher.deliver(make_sub(), make_event(event_id="evt_0003"))
    assert not result.delivered
    assert result.delays == [0.01, 0.02, 0.04]


def test_gives_up_on_4xx(settings):
    mock, calls = transport([410])
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    result = dispatcher.deliver(make_sub(), make_event(event_id="evt_0004"))
    assert not result.delivered
    assert len(calls) == 1


def test_duplicate_delivery_is_suppressed(settings):
    mock, calls = transport([200])
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    first = dispatcher.deliver(make_sub(), make_event(event_id="evt_0005"))
    second = dispatcher.deliver(make_sub(), make_event(event_id="evt_0005"))
    assert first.delivered and not first.skipped_duplicate
    assert second.skipped_duplicate
    assert len(calls) == 1


def test_only_subscribed_kinds_are_sent(settings):
    mock, calls = transport([200])
    dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))
    subs = [make_sub(id="sub_a"), make_sub(id="sub_b", events=["order.cancelled"])]
    results = dispatcher.deliver_all(subs, make_event(event_id="evt_0006"))
    assert len(results) == 1
    assert len(calls) == 1
"""

CONFTEST_PY = """import os

import pytest

from parcelhub.config import Settings
from parcelhub.store import MemoryStore


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("PARCELHUB_ENV", "test")
    monkeypatch.delenv("PARCELHUB_DATABASE_URL", raising=False)


@pytest.fixture
def store():
    return MemoryStore()


@pytest.fixture
def app_settings():
    return Settings(env="test", database_url="memory://")


@pytest.fixture
def client(store, app_settings):
    from fastapi.testclient import TestClient

    from parcelhub.main import create_app

    app = create_app(settings=app_settings, store=store)
    with TestClient(app) as c:
        yield c


def pytest_report_header(config):
    return f"parcelhub env: {os.environ.get('PARCELHUB_ENV', 'dev')}"
"""

CONFIG_PY = '''"""Runtime settings, read from PARCELHUB_* environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields


def _env(name: str, default: str) -> str:
    return os.environ.get(f"PARCELHUB_{name.upper()}", default)


@dataclass(frozen=True)
class Settings:
    env: str = "dev"
    database_url: str = "postgresql://parcelhub@localhost:5432/parcelhub"
    public_base_url: str = "http://localhost:8000"
    page_size_default: int = 50
    page_size_max: int = 500
    webhook_timeout_s: float = 5.0
    webhook_max_attempts: int = 6
    webhook_backoff_base_s: float = 1.0
    webhook_backoff_max_s: float = 300.0
    tracking_poll_interval_s: float = 900.0
    carriers: tuple[str, ...] = field(default=("dhl", "ups", "fedex", "postnl", "dpd"))

    @classmethod
    def from_env(cls) -> Settings:
        values = {}
        for f in fields(cls):
            raw = os.environ.get(f"PARCELHUB_{f.name.upper()}")
            if raw is None:
                continue
            if f.type in ("int", int):
                values[f.name] = int(raw)
            elif f.type in ("float", float):
                values[f.name] = float(raw)
            elif f.name == "carriers":
                values[f.name] = tuple(c.strip() for c in raw.split(",") if c.strip())
            else:
                values[f.name] = raw
        return cls(**values)

    @property
    def is_test(self) -> bool:
        return self.env == "test"
'''

MAIN_PY = '''"""ASGI entry point: ``uvicorn parcelhub.main:app``."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from parcelhub import orders, tracking
from parcelhub.config import Settings
from parcelhub.store import MemoryStore, PostgresStore, Store
from parcelhub.webhooks import WebhookDispatcher

log = logging.getLogger("parcelhub")


def create_app(settings: Settings | None = None, store: Store | None = None) -> FastAPI:
    settings = settings or Settings.from_env()
    if store is None:
        store = MemoryStore() if settings.database_url.startswith("memory://") else PostgresStore(
            settings.database_url
        )
    app = FastAPI(title="parcelhub", version="0.14.2")
    app.state.settings = settings
    app.state.store = store
    app.state.webhooks = WebhookDispatcher(settings)
    app.include_router(orders.router, prefix="/v1/orders", tags=["orders"])
    app.include_router(tracking.router, prefix="/v1/tracking", tags=["tracking"])

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"status": "ok", "env": settings.env}

    @app.exception_handler(LookupError)
    async def not_found(_: Request, exc: LookupError) -> JSONResponse:
        return JSONResponse({"error": "not_found", "detail": str(exc)}, status_code=404)

    log.info("parcelhub started env=%s store=%s", settings.env, type(store).__name__)
    return app


app = create_app()
'''

STORE_PY = '''"""Persistence: an in-memory store for tests and a Postgres one for production."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from typing import Protocol

from parcelhub.models import Order, OrderEvent, Subscription


class Store(Protocol):
    def get_order(self, order_id: str) -> Order: ...
    def put_order(self, order: Order) -> None: ...
    def list_orders(self, *, after: str | None, limit: int) -> list[Order]: ...
    def add_event(self, event: OrderEvent) -> None: ...
    def events_for(self, order_id: str) -> list[OrderEvent]: ...
    def subscriptions(self) -> Iterator[Subscription]: ...


class MemoryStore:
    def __init__(self) -> None:
        self._orders: dict[str, Order] = {}
        self._events: dict[str, list[OrderEvent]] = {}
        self._subs: dict[str, Subscription] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def next_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):06d}"

    def get_order(self, order_id: str) -> Order:
        try:
            return self._orders[order_id]
        except KeyError:
            raise LookupError(f"order {order_id} not found") from None

    def put_order(self, order: Order) -> None:
        with self._lock:
            self._orders[order.id] = order

    def list_orders(self, *, after: str | None, limit: int) -> list[Order]:
        ids = sorted(self._orders)
        if after is not None:
            ids = [i for i in ids if i > after]
        return [self._orders[i] for i in ids[:limit]]

    def add_event(self, event: OrderEvent) -> None:
        with self._lock:
            self._events.setdefault(event.order_id, []).append(event)

    def events_for(self, order_id: str) -> list[OrderEvent]:
        return list(self._events.get(order_id, []))

    def add_subscription(self, sub: Subscription) -> None:
        self._subs[sub.id] = sub

    def subscriptions(self) -> Iterator[Subscription]:
        return iter(list(self._subs.values()))


class PostgresStore:
    """Thin wrapper over psycopg; the SQL lives in parcelhub/sql/*.sql."""

    def __init__(self, url: str) -> None:
        import psycopg

        self._conn = psycopg.connect(url, autocommit=True)

    def get_order(self, order_id: str) -> Order:
        row = self._conn.execute("select data from orders where id = %s", (order_id,)).fetchone()
        if row is None:
            raise LookupError(f"order {order_id} not found")
        return Order.from_dict(row[0])

    def put_order(self, order: Order) -> None:
        self._conn.execute(
            "insert into orders (id, data) values (%s, %s) "
            "on conflict (id) do update set data = excluded.data",
            (order.id, order.to_dict()),
        )

    def list_orders(self, *, after: str | None, limit: int) -> list[Order]:
        rows = self._conn.execute(
            "select data from orders where (%s::text is null or id > %s) order by id limit %s",
            (after, after, limit),
        ).fetchall()
        return [Order.from_dict(r[0]) for r in rows]

    def add_event(self, event: OrderEvent) -> None:
        self._conn.execute(
            "insert into order_events (id, order_id, kind, payload) values (%s, %s, %s, %s)",
            (event.id, event.order_id, event.kind, event.payload),
        )

    def events_for(self, order_id: str) -> list[OrderEvent]:
        rows = self._conn.execute(
            "select id, kind, payload from order_events where order_id = %s order by id",
            (order_id,),
        ).fetchall()
        return [OrderEvent(id=r[0], kind=r[1], order_id=order_id, payload=r[2]) for r in rows]

    def subscriptions(self) -> Iterator[Subscription]:
        for row in self._conn.execute("select data from subscriptions where active"):
            yield Subscription(**row[0])
'''

PACKAGE_JSON = """{
  "name": "parcelhub-dashboard",
  "private": true,
  "version": "0.14.2",
  "type": "module",
  "scripts": {
    "dev": "vite",
    "build": "tsc -b && vite build",
    "preview": "vite preview",
    "lint": "eslint src --max-warnings 0",
    "test": "vitest run"
  },
  "dependencies": {
    "@tanstack/react-query": "^5.62.7",
    "date-fns": "^4.1.0",
    "react": "^18.3.1",
    "react-dom": "^18.3.1",
    "react-router-dom": "^6.28.0",
    "recharts": "^2.15.0",
    "zod": "^3.24.1"
  },
  "devDependencies": {
    "@types/react": "^18.3.17",
    "@types/react-dom": "^18.3.5",
    "@vitejs/plugin-react": "^4.3.4",
    "eslint": "^9.17.0",
    "typescript": "~5.6.3",
    "vite": "^6.0.5",
    "vitest": "^2.1.8"
  }
}
"""

# Models and the two router modules are generated: long, regular files are what agents read
# most, and writing them by hand would add nothing.
_MODEL_SPECS: list[tuple[str, list[tuple[str, str]]]] = [
    (
        "Address",
        [
            ("name", "str"),
            ("line1", "str"),
            ("line2", "str | None"),
            ("city", "str"),
            ("postcode", "str"),
            ("country", "str"),
        ],
    ),
    (
        "Parcel",
        [
            ("id", "str"),
            ("weight_g", "int"),
            ("length_mm", "int"),
            ("width_mm", "int"),
            ("height_mm", "int"),
            ("tracking_code", "str | None"),
            ("carrier", "str | None"),
        ],
    ),
    (
        "Order",
        [
            ("id", "str"),
            ("customer_id", "str"),
            ("status", "str"),
            ("created_at", "str"),
            ("updated_at", "str"),
            ("ship_to", "Address"),
            ("parcels", "list[Parcel]"),
            ("reference", "str | None"),
            ("notes", "str | None"),
        ],
    ),
    (
        "OrderEvent",
        [("id", "str"), ("kind", "str"), ("order_id", "str"), ("payload", "dict[str, object]")],
    ),
    (
        "Subscription",
        [
            ("id", "str"),
            ("url", "str"),
            ("secret", "str"),
            ("events", "list[str]"),
            ("active", "bool"),
        ],
    ),
    (
        "TrackingCheckpoint",
        [("at", "str"), ("location", "str"), ("status", "str"), ("description", "str")],
    ),
    (
        "TrackingInfo",
        [
            ("tracking_code", "str"),
            ("carrier", "str"),
            ("status", "str"),
            ("eta", "str | None"),
            ("checkpoints", "list[TrackingCheckpoint]"),
        ],
    ),
    (
        "Customer",
        [
            ("id", "str"),
            ("email", "str"),
            ("name", "str"),
            ("created_at", "str"),
            ("default_address", "Address | None"),
        ],
    ),
]


def _models_py() -> str:
    out = [
        '"""Domain objects. Plain dataclasses with explicit (de)serialisation."""',
        "",
        "from __future__ import annotations",
        "",
        "import json",
        "from dataclasses import asdict, dataclass, field",
        "",
        'ORDER_STATUSES = ("draft", "placed", "packed", "shipped", "delivered", "cancelled")',
        "",
    ]
    for name, fields_ in _MODEL_SPECS:
        out += ["", "@dataclass", f"class {name}:"]
        for fname, ftype in fields_:
            if ftype.startswith("list["):
                out.append(f"    {fname}: {ftype} = field(default_factory=list)")
            elif ftype == "bool":
                out.append(f"    {fname}: {ftype} = True")
            elif "None" in ftype:
                out.append(f"    {fname}: {ftype} = None")
            elif ftype.startswith("dict["):
                out.append(f"    {fname}: {ftype} = field(default_factory=dict)")
            else:
                out.append(f"    {fname}: {ftype}")
        out += [
            "",
            "    def to_dict(self) -> dict[str, object]:",
            "        return asdict(self)",
            "",
            "    def to_json(self) -> str:",
            '        return json.dumps(self.to_dict(), separators=(",", ":"), sort_keys=True)',
            "",
            "    @classmethod",
            f"    def from_dict(cls, data: dict[str, object]) -> {name}:",
            "        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}",
        ]
        for fname, ftype in fields_:
            inner = ftype.removeprefix("list[").removesuffix("]").removesuffix(" | None")
            if inner in {n for n, _ in _MODEL_SPECS}:
                if ftype.startswith("list["):
                    out.append(
                        f"        known[{fname!r}] = [{inner}.from_dict(x) for x in known.get({fname!r}, [])]"
                    )
                else:
                    out.append(f"        if known.get({fname!r}) is not None:")
                    out.append(
                        f"            known[{fname!r}] = {inner}.from_dict(known[{fname!r}])"
                    )
        out.append("        return cls(**known)")
        if name == "Subscription":
            out += [
                "",
                "    def wants(self, kind: str) -> bool:",
                '        return self.active and (kind in self.events or "*" in self.events)',
            ]
        if name == "Order":
            out += [
                "",
                "    @property",
                "    def is_open(self) -> bool:",
                '        return self.status not in ("delivered", "cancelled")',
                "",
                "    def total_weight_g(self) -> int:",
                "        return sum(p.weight_g for p in self.parcels)",
            ]
    return "\n".join(out) + "\n"


_ROUTES = [
    ("get", "", "list_orders", "List orders, oldest first, with cursor pagination."),
    ("post", "", "create_order", "Create an order in status draft."),
    ("get", "/{order_id}", "get_order", "Fetch one order."),
    ("patch", "/{order_id}", "update_order", "Change the address, reference or notes of a draft."),
    ("post", "/{order_id}/place", "place_order", "Move a draft to placed and notify subscribers."),
    ("post", "/{order_id}/pack", "pack_order", "Record the parcels of a placed order."),
    ("post", "/{order_id}/ship", "ship_order", "Attach tracking codes and mark as shipped."),
    ("post", "/{order_id}/deliver", "deliver_order", "Mark as delivered (carrier callback)."),
    ("post", "/{order_id}/cancel", "cancel_order", "Cancel an order that has not shipped yet."),
    ("get", "/{order_id}/events", "order_events", "Events recorded for an order, oldest first."),
    ("get", "/{order_id}/label", "order_label", "Shipping label as PDF (first parcel)."),
]


def _orders_py() -> str:
    out = [
        '"""HTTP routes for orders."""',
        "",
        "from __future__ import annotations",
        "",
        "from datetime import UTC, datetime",
        "",
        "from fastapi import APIRouter, HTTPException, Query, Request",
        "",
        "from parcelhub.models import Address, Order, OrderEvent, Parcel",
        "",
        "router = APIRouter()",
        "",
        "",
        "def _now() -> str:",
        '    return datetime.now(UTC).isoformat(timespec="seconds")',
        "",
        "",
        "def _emit(request: Request, order: Order, kind: str, **payload: object) -> None:",
        "    store = request.app.state.store",
        '    event = OrderEvent(id=store.next_id("evt"), kind=kind, order_id=order.id, payload=payload)',
        "    store.add_event(event)",
        "    request.app.state.webhooks.deliver_all(store.subscriptions(), event)",
        "",
    ]
    transitions = {
        "place_order": ("draft", "placed", "order.placed"),
        "pack_order": ("placed", "packed", "order.packed"),
        "ship_order": ("packed", "shipped", "order.shipped"),
        "deliver_order": ("shipped", "delivered", "order.delivered"),
        "cancel_order": ("draft|placed|packed", "cancelled", "order.cancelled"),
    }
    for method, path, func, doc in _ROUTES:
        out += ["", f"@router.{method}({path!r})"]
        if func == "list_orders":
            out += [
                "def list_orders(",
                "    request: Request,",
                "    after: str | None = None,",
                "    limit: int = Query(50, ge=1, le=500),",
                ") -> dict[str, object]:",
                f'    """{doc}"""',
                "    store = request.app.state.store",
                "    orders = store.list_orders(after=after, limit=limit + 1)",
                "    page, more = orders[:limit], len(orders) > limit",
                "    return {",
                '        "items": [o.to_dict() for o in page],',
                '        "next": page[-1].id if more and page else None,',
                "    }",
            ]
        elif func == "create_order":
            out += [
                "def create_order(request: Request, body: dict[str, object]) -> dict[str, object]:",
                f'    """{doc}"""',
                "    store = request.app.state.store",
                "    now = _now()",
                "    order = Order(",
                '        id=store.next_id("ord"),',
                '        customer_id=str(body["customer_id"]),',
                '        status="draft",',
                "        created_at=now,",
                "        updated_at=now,",
                '        ship_to=Address.from_dict(body["ship_to"]),  # type: ignore[arg-type]',
                '        reference=body.get("reference"),  # type: ignore[arg-type]',
                "    )",
                "    store.put_order(order)",
                "    return order.to_dict()",
            ]
        elif func in transitions:
            before, after_, kind = transitions[func]
            allowed = ", ".join(repr(s) for s in before.split("|"))
            out += [
                f"def {func}(request: Request, order_id: str, body: dict[str, object] | None = None) -> dict[str, object]:",
                f'    """{doc}"""',
                "    store = request.app.state.store",
                "    order = store.get_order(order_id)",
                f"    if order.status not in ({allowed},):",
                '        raise HTTPException(409, f"cannot go from {order.status} to '
                + after_
                + '")',
            ]
            if func == "pack_order":
                out += [
                    '    parcels = (body or {}).get("parcels", [])',
                    "    order.parcels = [Parcel.from_dict(p) for p in parcels]  # type: ignore[union-attr]",
                ]
            if func == "ship_order":
                out += [
                    '    codes = (body or {}).get("tracking_codes", [])',
                    "    for parcel, code in zip(order.parcels, codes, strict=False):  # type: ignore[arg-type]",
                    "        parcel.tracking_code = code",
                    '        parcel.carrier = (body or {}).get("carrier")  # type: ignore[assignment]',
                ]
            out += [
                f"    order.status = {after_!r}",
                "    order.updated_at = _now()",
                "    store.put_order(order)",
                f"    _emit(request, order, {kind!r})",
                "    return order.to_dict()",
            ]
        elif func == "get_order":
            out += [
                "def get_order(request: Request, order_id: str) -> dict[str, object]:",
                f'    """{doc}"""',
                "    return request.app.state.store.get_order(order_id).to_dict()",
            ]
        elif func == "update_order":
            out += [
                "def update_order(request: Request, order_id: str, body: dict[str, object]) -> dict[str, object]:",
                f'    """{doc}"""',
                "    store = request.app.state.store",
                "    order = store.get_order(order_id)",
                '    if order.status != "draft":',
                '        raise HTTPException(409, "only drafts can be edited")',
                '    if "ship_to" in body:',
                '        order.ship_to = Address.from_dict(body["ship_to"])  # type: ignore[arg-type]',
                '    for key in ("reference", "notes"):',
                "        if key in body:",
                "            setattr(order, key, body[key])",
                "    order.updated_at = _now()",
                "    store.put_order(order)",
                "    return order.to_dict()",
            ]
        elif func == "order_events":
            out += [
                "def order_events(request: Request, order_id: str) -> list[dict[str, object]]:",
                f'    """{doc}"""',
                "    request.app.state.store.get_order(order_id)",
                "    return [e.to_dict() for e in request.app.state.store.events_for(order_id)]",
            ]
        else:
            out += [
                f"def {func}(request: Request, order_id: str) -> bytes:",
                f'    """{doc}"""',
                "    from parcelhub.labels import render_label",
                "",
                "    order = request.app.state.store.get_order(order_id)",
                "    if not order.parcels:",
                '        raise HTTPException(409, "order has no parcels yet")',
                "    return render_label(order, order.parcels[0])",
            ]
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def _ci_yml() -> str:
    return """name: ci
on:
  push:
    branches: [main]
  pull_request:

jobs:
  test:
    runs-on: ubuntu-24.04
    strategy:
      matrix:
        python: ["3.11", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python }}
          cache: pip
      - run: pip install -e '.[test]'
      - run: pytest -q -p randomly --durations=10
  dashboard:
    runs-on: ubuntu-24.04
    defaults:
      run:
        working-directory: web
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-node@v4
        with:
          node-version: 22
          cache: npm
          cache-dependency-path: web/package-lock.json
      - run: npm ci
      - run: npm run build
"""


def _pyproject() -> str:
    return """[project]
name = "parcelhub"
version = "0.14.2"
requires-python = ">=3.11"
dependencies = ["fastapi>=0.115", "httpx>=0.28", "psycopg[binary]>=3.2", "uvicorn>=0.32"]

[project.optional-dependencies]
test = ["pytest>=8.3", "pytest-randomly>=3.16", "pytest-repeat>=0.9", "pytest-cov>=6.0"]

[tool.pytest.ini_options]
testpaths = ["tests"]
addopts = "-ra"
log_format = "%(asctime)s.%(msecs)03d %(levelname)-8s %(name)s:%(filename)s:%(lineno)d %(message)s"
log_date_format = "%H:%M:%S"
"""


class Repo:
    """The fictional checkout: path -> text. Sessions read from it and edit it in place."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {
            "pyproject.toml": _pyproject(),
            ".github/workflows/ci.yml": _ci_yml(),
            "parcelhub/__init__.py": '__version__ = "0.14.2"\n',
            "parcelhub/config.py": CONFIG_PY,
            "parcelhub/main.py": MAIN_PY,
            "parcelhub/models.py": _models_py(),
            "parcelhub/orders.py": _orders_py(),
            "parcelhub/store.py": STORE_PY,
            "parcelhub/webhooks.py": WEBHOOKS_PY,
            "tests/__init__.py": "",
            "tests/conftest.py": CONFTEST_PY,
            "tests/test_webhooks.py": TEST_WEBHOOKS_PY,
            "web/package.json": PACKAGE_JSON,
            "tests/test_orders.py": orders_tests(),
            "parcelhub/carrier_codes.py": carrier_codes(random.Random(4242)),
            "web/src/lib/dates.ts": DATES_TS,
            "web/src/lib/dates.test.ts": DATES_TEST_TS,
            "web/src/api/orders.ts": ORDERS_API_TS,
            "web/src/pages/Orders.tsx": ORDERS_PAGE_TSX,
        }

    def read(self, path: str) -> str:
        return self.files[path]

    def replace(self, path: str, old: str, new: str) -> None:
        text = self.files[path]
        if old not in text:
            raise KeyError(f"{old[:40]!r} not in {path}")
        self.files[path] = text.replace(old, new, 1)

    def grep(self, pattern: str, paths: list[str] | None = None) -> list[tuple[str, int, str]]:
        """Every (path, line number, line) matching the regex, files in sorted order."""
        rx = re.compile(pattern)
        hits = []
        for path in sorted(self.files):
            if paths is not None and not any(path.startswith(p) for p in paths):
                continue
            for n, line in enumerate(self.files[path].splitlines(), 1):
                if rx.search(line):
                    hits.append((path, n, line))
        return hits


# ---------------------------------------------------------------------------------------------
# Tool outputs
# ---------------------------------------------------------------------------------------------


def numbered_claude(text: str, start: int = 1) -> str:
    """Claude Code's Read rendering: right-aligned line numbers, an arrow, the line."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(lines, start))


def numbered_opencode(text: str) -> str:
    """opencode's read rendering (legacy): zero-padded numbers and a pipe, inside <file>."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    body = "\n".join(f"{n:05d}| {line}" for n, line in enumerate(lines, 1))
    return f"<file>\n{body}\n\n(End of file - total {len(lines)} lines)\n</file>"


def rg_output(hits: list[tuple[str, int, str]]) -> str:
    return "\n".join(f"{p}:{n}:{line}" for p, n, line in hits)


def rid(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def hexid(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


_TEST_IDS = [
    "tests/test_health.py::test_healthz",
    "tests/test_health.py::test_healthz_reports_env",
    "tests/test_config.py::test_defaults",
    "tests/test_config.py::test_from_env_casts_numbers",
    "tests/test_config.py::test_carriers_are_split",
    "tests/test_models.py::test_order_roundtrip",
    "tests/test_models.py::test_subscription_wants_wildcard",
    "tests/test_models.py::test_total_weight",
    "tests/test_orders.py::test_create_order",
    "tests/test_orders.py::test_get_missing_order_is_404",
    "tests/test_orders.py::test_list_orders_paginates",
    "tests/test_orders.py::test_update_only_drafts",
    "tests/test_orders.py::test_place_emits_event",
    "tests/test_orders.py::test_pack_then_ship",
    "tests/test_orders.py::test_cannot_ship_draft",
    "tests/test_orders.py::test_cancel_after_ship_is_conflict",
    "tests/test_orders.py::test_label_requires_parcels",
    "tests/test_store.py::test_memory_store_orders_sorted",
    "tests/test_store.py::test_memory_store_after_cursor",
    "tests/test_store.py::test_events_are_copied",
    "tests/test_tracking.py::test_poll_updates_status",
    "tests/test_tracking.py::test_unknown_carrier",
    "tests/test_tracking.py::test_checkpoints_sorted",
    "tests/test_webhooks.py::test_signature_is_stable",
    "tests/test_webhooks.py::test_delivers_on_first_try",
    "tests/test_webhooks.py::test_retries_on_503_then_succeeds",
    "tests/test_webhooks.py::test_retry_schedule_is_exponential[statuses0]",
    "tests/test_webhooks.py::test_retry_schedule_is_exponential[statuses1]",
    "tests/test_webhooks.py::test_gives_up_on_4xx",
    "tests/test_webhooks.py::test_duplicate_delivery_is_suppressed",
    "tests/test_webhooks.py::test_only_subscribed_kinds_are_sent",
]


def test_ids(only: str | None = None) -> list[str]:
    return [t for t in _TEST_IDS if only is None or t.startswith(only)]


def _header(rng: random.Random, n_items: int, plugins: str, seed: int | None = None) -> list[str]:
    lines = [
        "=" * 29 + " test session starts " + "=" * 30,
        "platform linux -- Python 3.12.8, pytest-8.3.4, pluggy-1.5.0",
    ]
    if seed is not None:
        lines.append(f"Using --randomly-seed={seed}")
    lines += [
        "parcelhub env: test",
        f"rootdir: {ROOT}",
        "configfile: pyproject.toml",
        f"plugins: {plugins}",
        f"collected {n_items} items",
        "",
    ]
    return lines


_PLUGINS = "anyio-4.8.0, randomly-3.16.0, repeat-0.9.3, cov-6.0.0"


def _flaky_failure(rng: random.Random, test: str, kind: str) -> list[str]:
    name = test.split("::")[1]
    bar = f" {name} "
    pad = max(0, (80 - len(bar)) // 2)
    out = ["_" * pad + bar + "_" * max(0, 80 - pad - len(bar)), ""]
    if kind == "schedule":
        got = [0.01, round(0.02 + rng.uniform(0.001, 0.02), 3), 0.04]
        out += [
            "settings = Settings(env='dev', database_url='postgresql://parcelhub@localhost:5432/parcelhub', "
            "public_base_url='http://localhost:8000', page_size_default=50, page_size_max=500, "
            "webhook_timeout_s=5.0, webhook_max_attempts=4, webhook_backoff_base_s=0.01, "
            "webhook_backoff_max_s=1.0, tracking_poll_interval_s=900.0, carriers=('dhl', 'ups', "
            "'fedex', 'postnl', 'dpd'))",
            "statuses = [500, 500, 500, 500]",
            "",
            '    @pytest.mark.parametrize("statuses", [[500, 500, 500, 500], [429, 502, 504, 503]])',
            "    def test_retry_schedule_is_exponential(settings, statuses):",
            "        mock, _ = transport(statuses)",
            "        dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))",
            '        result = dispatcher.deliver(make_sub(), make_event(event_id="evt_0003"))',
            "        assert not result.delivered",
            ">       assert result.delays == [0.01, 0.02, 0.04]",
            f"E       assert {got} == [0.01, 0.02, 0.04]",
            "E         ",
            f"E         At index 1 diff: {got[1]} != 0.02",
            "E         ",
            "E         Full diff:",
            "E           [",
            "E               0.01,",
            "E         -     0.02,",
            f"E         +     {got[1]},",
            "E               0.04,",
            "E           ]",
            "",
            "tests/test_webhooks.py:59: AssertionError",
        ]
    else:
        out += [
            "settings = Settings(env='dev', database_url='postgresql://parcelhub@localhost:5432/parcelhub', "
            "public_base_url='http://localhost:8000', page_size_default=50, page_size_max=500, "
            "webhook_timeout_s=5.0, webhook_max_attempts=4, webhook_backoff_base_s=0.01, "
            "webhook_backoff_max_s=1.0, tracking_poll_interval_s=900.0, carriers=('dhl', 'ups', "
            "'fedex', 'postnl', 'dpd'))",
            "",
            "    def test_duplicate_delivery_is_suppressed(settings):",
            "        mock, calls = transport([200])",
            "        dispatcher = WebhookDispatcher(settings, client=httpx.Client(transport=mock))",
            '        first = dispatcher.deliver(make_sub(), make_event(event_id="evt_0005"))',
            '        second = dispatcher.deliver(make_sub(), make_event(event_id="evt_0005"))',
            ">       assert first.delivered and not first.skipped_duplicate",
            "E       AssertionError: assert (True and not True)",
            "E        +  where True = DeliveryResult(delivered=True, attempts=[], delays=[], skipped_duplicate=True).delivered",
            "E        +  and   True = DeliveryResult(delivered=True, attempts=[], delays=[], skipped_duplicate=True).skipped_duplicate",
            "",
            "tests/test_webhooks.py:75: AssertionError",
            "------------------------------ Captured log call -------------------------------",
            "DEBUG    parcelhub.webhooks:webhooks.py:67 skip duplicate delivery sub=sub_test event=evt_0005",
        ]
    out.append("")
    return out


def pytest_run(
    rng: random.Random,
    tests: list[str],
    *,
    count: int = 1,
    failures: dict[str, str] | None = None,
    seed: int | None = None,
    verbose: bool = False,
) -> tuple[str, int]:
    """A pytest console log. ``failures`` maps a test id (with ``[n-count]`` suffix when
    ``count > 1``) to a failure kind (``schedule`` or ``duplicate``). Returns (log, exit code)."""
    failures = failures or {}
    items: list[str] = []
    for t in tests:
        if count > 1:
            items += [
                f"{t}[{i}-{count}]" if "[" not in t else t.replace("]", f"-{i}-{count}]")
                for i in range(1, count + 1)
            ]
        else:
            items.append(t)
    lines = _header(rng, len(items), _PLUGINS, seed)
    failed = [i for i in items if i in failures]
    if verbose:
        for k, item in enumerate(items, 1):
            pct = k * 100 // len(items)
            status = "FAILED" if item in failures else "PASSED"
            left = f"{item} {status}"
            lines.append(f"{left}{' ' * max(1, 74 - len(left))}[{pct:>3}%]")
    else:
        by_file: dict[str, list[str]] = {}
        for item in items:
            by_file.setdefault(item.split("::")[0], []).append(item)
        done = 0
        for path, its in by_file.items():
            row = ""
            for item in its:
                row += "F" if item in failures else "."
                done += 1
                if len(row) == 50:
                    pct = done * 100 // len(items)
                    lines.append(
                        f"{path} {row}{' ' * max(1, 73 - len(path) - len(row))}[{pct:>3}%]"
                    )
                    row = ""
                    path = " " * len(path)
            if row:
                pct = done * 100 // len(items)
                lines.append(f"{path} {row}{' ' * max(1, 73 - len(path) - len(row))}[{pct:>3}%]")
    lines.append("")
    if failed:
        lines.append("=" * 35 + " FAILURES " + "=" * 35)
        for item in failed:
            lines += _flaky_failure(rng, item, failures[item])
    duration = round(0.9 + 0.031 * len(items) * rng.uniform(0.8, 1.3), 2)
    if failed:
        lines.append("=" * 27 + " short test summary info " + "=" * 28)
        for item in failed:
            msg = (
                "AssertionError: assert [0.01, 0.0..."
                if failures[item] == "schedule"
                else "AssertionError: assert (True and not True)"
            )
            lines.append(f"FAILED {item} - {msg}")
        summary = f" {len(failed)} failed, {len(items) - len(failed)} passed in {duration}s "
    else:
        summary = f" {len(items)} passed in {duration}s "
    pad = (80 - len(summary)) // 2
    lines.append("=" * pad + summary + "=" * (80 - pad - len(summary)))
    return "\n".join(lines), (1 if failed else 0)


_LOG_MESSAGES = [
    (
        "DEBUG",
        "parcelhub.webhooks",
        88,
        "scheduling retry sub={sub} event={evt} attempt={a} delay={d:.3f}s",
    ),
    (
        "DEBUG",
        "httpx",
        1025,
        'HTTP Request: POST https://hooks.example.test/parcelhub "HTTP/1.1 {status} {reason}"',
    ),
    (
        "DEBUG",
        "httpcore.connection",
        87,
        "connect_tcp.started host='hooks.example.test' port=443 local_address=None timeout=5.0 socket_options=None",
    ),
    ("DEBUG", "httpcore.http11", 87, "send_request_headers.started request=<Request [b'POST']>"),
    ("DEBUG", "httpcore.http11", 87, "send_request_body.complete"),
    (
        "DEBUG",
        "httpcore.http11",
        87,
        "receive_response_headers.complete return_value=(b'HTTP/1.1', {status}, b'{reason}', [(b'content-length', b'0')])",
    ),
    ("INFO", "parcelhub.webhooks", 84, "delivered sub={sub} event={evt} attempt={a}"),
]


def ci_job_log(
    rng: random.Random, *, job: str, run_id: int, target_tokens: int, chars_per_token: float
) -> str:
    """A GitHub-Actions-style job log: setup steps, a pip install, then pytest with DEBUG live
    logging repeated until the log holds about ``target_tokens`` tokens."""
    t = [9, 12, 3.0]

    def ts() -> str:
        t[2] += rng.uniform(0.0005, 0.004)
        if t[2] >= 60:
            t[2] -= 60
            t[1] += 1
        return f"2026-03-14T{t[0]:02d}:{t[1]:02d}:{t[2]:010.7f}Z"

    lines = [
        f"{ts()} Current runner version: '2.322.0'",
        f"{ts()} Runner name: 'GitHub Actions 17'",
        f"{ts()} ##[group]Operating System",
        f"{ts()} Ubuntu",
        f"{ts()} 24.04.2",
        f"{ts()} LTS",
        f"{ts()} ##[endgroup]",
        f"{ts()} ##[group]Run actions/checkout@v4",
        f"{ts()} Syncing repository: acme-logistics/parcelhub",
        f"{ts()} ##[endgroup]",
        f"{ts()} ##[group]Run pip install -e '.[test]'",
    ]
    for pkg, ver in [
        ("fastapi", "0.115.6"),
        ("httpx", "0.28.1"),
        ("psycopg", "3.2.3"),
        ("uvicorn", "0.34.0"),
        ("pytest", "8.3.4"),
        ("pytest-randomly", "3.16.0"),
        ("pytest-repeat", "0.9.3"),
        ("pytest-cov", "6.0.0"),
        ("starlette", "0.41.3"),
        ("pydantic", "2.10.4"),
        ("pydantic-core", "2.27.2"),
        ("anyio", "4.8.0"),
        ("sniffio", "1.3.1"),
        ("h11", "0.14.0"),
        ("httpcore", "1.0.7"),
        ("certifi", "2024.12.14"),
        ("idna", "3.10"),
        ("coverage", "7.6.10"),
        ("typing-extensions", "4.12.2"),
        ("annotated-types", "0.7.0"),
    ]:
        lines.append(f"{ts()} Collecting {pkg}=={ver}")
        lines.append(
            f"{ts()}   Using cached {pkg.replace('-', '_')}-{ver}-py3-none-any.whl.metadata ({rng.randint(2, 30)}.{rng.randint(0, 9)} kB)"
        )
    lines.append(f"{ts()} Successfully installed parcelhub-0.14.2 (and 19 more)")
    lines.append(f"{ts()} ##[endgroup]")
    lines.append(
        f"{ts()} ##[group]Run pytest -q -p randomly -o log_cli=true --log-cli-level=DEBUG --count=12 tests/test_webhooks.py"
    )
    tests = test_ids("tests/test_webhooks.py")
    lines += [f"{ts()} {x}" for x in _header(rng, len(tests) * 12, _PLUGINS, 2718281828)]
    budget = target_tokens * chars_per_token
    size = sum(len(x) + 1 for x in lines)
    k = 0
    failures_left = 3
    while size < budget:
        k += 1
        test = tests[k % len(tests)]
        rep = (k // len(tests)) % 12 + 1
        item = f"{test}[{rep}-12]" if "[" not in test else test.replace("]", f"-{rep}-12]")
        block = [f"{ts()} {item} ", f"{ts()} " + "-" * 32 + " live log call " + "-" * 33]
        sub = "sub_test"
        evt = f"evt_{rng.randint(1, 9):04d}"
        attempts = rng.randint(1, 4)
        for a in range(1, attempts + 1):
            status, reason = (
                (200, "OK")
                if a == attempts
                else rng.choice(
                    [
                        (503, "Service Unavailable"),
                        (500, "Internal Server Error"),
                        (429, "Too Many Requests"),
                    ]
                )
            )
            for lvl, logger, lineno, msg in [*_LOG_MESSAGES[2:6], _LOG_MESSAGES[1]]:
                text = msg.format(
                    sub=sub, evt=evt, a=a, d=0.01 * 2 ** (a - 1), status=status, reason=reason
                )
                block.append(
                    f"{ts()} {ts()[11:23]} {lvl:<8} {logger}:{'webhooks.py' if 'parcelhub' in logger else '_client.py' if logger == 'httpx' else '_trace.py'}:{lineno} {text}"
                )
            if a < attempts:
                lvl, logger, lineno, msg = _LOG_MESSAGES[0]
                block.append(
                    f"{ts()} {ts()[11:23]} {lvl:<8} {logger}:webhooks.py:{lineno} {msg.format(sub=sub, evt=evt, a=a + 1, d=0.01 * 2 ** (a - 1))}"
                )
        verdict = "PASSED"
        if failures_left and rng.random() < 0.004:
            verdict = "FAILED"
            failures_left -= 1
        block.append(f"{ts()} {verdict}{' ' * 66}[{min(99, k * 100 // (len(tests) * 12)):>3}%]")
        for b in block:
            size += len(b) + 1
        lines += block
    lines.append(f"{ts()} " + "=" * 27 + " short test summary info " + "=" * 28)
    lines.append(
        f"{ts()} FAILED tests/test_webhooks.py::test_duplicate_delivery_is_suppressed[7-12] - AssertionError: assert (True and not True)"
    )
    lines.append(
        f"{ts()} FAILED tests/test_webhooks.py::test_retry_schedule_is_exponential[statuses1-3-12] - AssertionError: assert [0.01, 0.0..."
    )
    lines.append(
        f"{ts()} " + "=" * 22 + f" 2 failed, {len(tests) * 12 - 2} passed in 41.87s " + "=" * 22
    )
    lines.append(f"{ts()} ##[error]Process completed with exit code 1.")
    return "\n".join(lines)


# A few hundred real package names (public facts) for the npm install log.
_NPM_PACKAGES = [
    "@babel/code-frame",
    "@babel/compat-data",
    "@babel/core",
    "@babel/generator",
    "@babel/helper-compilation-targets",
    "@babel/helper-module-imports",
    "@babel/helper-module-transforms",
    "@babel/helper-plugin-utils",
    "@babel/helper-string-parser",
    "@babel/helper-validator-identifier",
    "@babel/helper-validator-option",
    "@babel/helpers",
    "@babel/parser",
    "@babel/plugin-transform-react-jsx-self",
    "@babel/plugin-transform-react-jsx-source",
    "@babel/runtime",
    "@babel/template",
    "@babel/traverse",
    "@babel/types",
    "@esbuild/linux-x64",
    "@eslint-community/eslint-utils",
    "@eslint-community/regexpp",
    "@eslint/config-array",
    "@eslint/core",
    "@eslint/eslintrc",
    "@eslint/js",
    "@eslint/object-schema",
    "@eslint/plugin-kit",
    "@humanfs/core",
    "@humanfs/node",
    "@humanwhocodes/module-importer",
    "@humanwhocodes/retry",
    "@jridgewell/gen-mapping",
    "@jridgewell/resolve-uri",
    "@jridgewell/set-array",
    "@jridgewell/sourcemap-codec",
    "@jridgewell/trace-mapping",
    "@remix-run/router",
    "@rollup/rollup-linux-x64-gnu",
    "@rollup/rollup-linux-x64-musl",
    "@tanstack/query-core",
    "@tanstack/react-query",
    "@types/babel__core",
    "@types/babel__generator",
    "@types/babel__template",
    "@types/babel__traverse",
    "@types/d3-array",
    "@types/d3-color",
    "@types/d3-ease",
    "@types/d3-interpolate",
    "@types/d3-path",
    "@types/d3-scale",
    "@types/d3-shape",
    "@types/d3-time",
    "@types/d3-timer",
    "@types/estree",
    "@types/json-schema",
    "@types/prop-types",
    "@types/react",
    "@types/react-dom",
    "@vitejs/plugin-react",
    "@vitest/expect",
    "@vitest/mocker",
    "@vitest/pretty-format",
    "@vitest/runner",
    "@vitest/snapshot",
    "@vitest/spy",
    "@vitest/utils",
    "acorn",
    "acorn-jsx",
    "ajv",
    "ansi-styles",
    "argparse",
    "assertion-error",
    "balanced-match",
    "brace-expansion",
    "browserslist",
    "cac",
    "callsites",
    "caniuse-lite",
    "chai",
    "chalk",
    "check-error",
    "clsx",
    "color-convert",
    "color-name",
    "concat-map",
    "convert-source-map",
    "cross-spawn",
    "csstype",
    "d3-array",
    "d3-color",
    "d3-ease",
    "d3-format",
    "d3-interpolate",
    "d3-path",
    "d3-scale",
    "d3-shape",
    "d3-time",
    "d3-time-format",
    "d3-timer",
    "date-fns",
    "debug",
    "decimal.js-light",
    "deep-eql",
    "deep-is",
    "dom-helpers",
    "electron-to-chromium",
    "es-module-lexer",
    "esbuild",
    "escalade",
    "escape-string-regexp",
    "eslint",
    "eslint-scope",
    "eslint-visitor-keys",
    "espree",
    "esquery",
    "esrecurse",
    "estraverse",
    "estree-walker",
    "esutils",
    "eventemitter3",
    "expect-type",
    "fast-deep-equal",
    "fast-equals",
    "fast-json-stable-stringify",
    "fast-levenshtein",
    "file-entry-cache",
    "find-up",
    "flat-cache",
    "flatted",
    "fsevents",
    "gensync",
    "glob-parent",
    "globals",
    "has-flag",
    "ignore",
    "import-fresh",
    "imurmurhash",
    "internmap",
    "is-extglob",
    "is-glob",
    "isexe",
    "js-tokens",
    "js-yaml",
    "jsesc",
    "json-buffer",
    "json-schema-traverse",
    "json-stable-stringify-without-jsonify",
    "json5",
    "keyv",
    "levn",
    "locate-path",
    "lodash",
    "lodash.merge",
    "loose-envify",
    "loupe",
    "lru-cache",
    "magic-string",
    "minimatch",
    "ms",
    "nanoid",
    "natural-compare",
    "node-releases",
    "object-assign",
    "optionator",
    "p-limit",
    "p-locate",
    "parent-module",
    "path-exists",
    "path-key",
    "pathe",
    "pathval",
    "picocolors",
    "postcss",
    "prelude-ls",
    "prop-types",
    "punycode",
    "react",
    "react-dom",
    "react-is",
    "react-refresh",
    "react-router",
    "react-router-dom",
    "react-smooth",
    "react-transition-group",
    "recharts",
    "recharts-scale",
    "resolve-from",
    "rollup",
    "scheduler",
    "semver",
    "shebang-command",
    "shebang-regex",
    "siginfo",
    "source-map-js",
    "stackback",
    "std-env",
    "strip-json-comments",
    "supports-color",
    "tiny-invariant",
    "tinybench",
    "tinyexec",
    "tinypool",
    "tinyrainbow",
    "tinyspy",
    "type-check",
    "typescript",
    "update-browserslist-db",
    "uri-js",
    "victory-vendor",
    "vite",
    "vite-node",
    "vitest",
    "which",
    "why-is-node-running",
    "word-wrap",
    "yallist",
    "yocto-queue",
    "zod",
]


def npm_install_log(rng: random.Random, *, max_chars: int) -> str:
    """``npm ci --loglevel=http`` followed by ``npm run build`` (vite), cut to ``max_chars``."""
    lines = [
        "npm verbose cli /usr/local/bin/node /usr/local/bin/npm",
        "npm info using npm@10.9.2",
        "npm info using node@v22.13.0",
        "npm verbose title npm ci",
        'npm verbose argv "ci" "--loglevel" "http"',
        f"npm verbose logfile logs-max:10 dir:/home/dev/.npm/_logs/2026-03-14T09_31_{rng.randint(10, 59)}_{rng.randint(100, 999)}Z-",
        "npm http fetch GET 200 https://registry.npmjs.org/npm 131ms",
    ]
    deprecated = {
        "inflight",
        "glob",
        "rimraf",
        "@humanwhocodes/config-array",
        "@humanwhocodes/object-schema",
    }
    pkgs = list(_NPM_PACKAGES) + sorted(deprecated)
    for pkg in pkgs:
        ver = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
        name = pkg.split("/")[-1]
        cache = rng.random() < 0.35
        ms = rng.randint(3, 40) if cache else rng.randint(40, 900)
        lines.append(
            f"npm http fetch GET 200 https://registry.npmjs.org/{pkg}/-/{name}-{ver}.tgz {ms}ms{' (cache hit)' if cache else ''}"
        )
        if pkg in deprecated:
            lines.append(
                f"npm warn deprecated {pkg}@{ver}: This module is no longer supported; see its README for the replacement."
            )
    lines += [
        "",
        f"added {len(pkgs) + 61} packages, and audited {len(pkgs) + 62} packages in {rng.randint(9, 30)}s",
        "",
        f"{rng.randint(30, 60)} packages are looking for funding",
        "  run `npm fund` for details",
        "",
        "found 0 vulnerabilities",
        "",
        "> parcelhub-dashboard@0.14.2 build",
        "> tsc -b && vite build",
        "",
        "vite v6.0.7 building for production...",
        "transforming...",
        f"\u2713 {rng.randint(2200, 2600)} modules transformed.",
        "rendering chunks...",
        "computing gzip size...",
    ]
    for chunk in [
        "index",
        "orders",
        "tracking",
        "webhooks",
        "charts",
        "vendor-react",
        "vendor-recharts",
        "vendor-query",
        "settings",
        "login",
    ]:
        size = rng.uniform(2, 600)
        lines.append(
            f"dist/assets/{chunk}-{rid(rng, 8, string.ascii_letters + string.digits + '_-')}.js{' ' * (30 - len(chunk))}{size:>8.2f} kB \u2502 gzip: {size / 3.2:>7.2f} kB"
        )
    lines += [
        "",
        "(!) Some chunks are larger than 500 kB after minification. Consider:",
        "- Using dynamic import() to code-split the application",
        "- Use build.rollupOptions.output.manualChunks to improve chunking",
        f"\u2713 built in {rng.uniform(4, 12):.2f}s",
    ]
    text = "\n".join(lines)
    return text[:max_chars]


def webhook_fixture_json(rng: random.Random, *, target_chars: int) -> str:
    """One minified JSON line: recorded webhook payloads used by the contract tests."""
    events = []
    kinds = ["order.placed", "order.packed", "order.shipped", "order.delivered", "order.cancelled"]
    cities = ["Rotterdam", "Leipzig", "Lyon", "Porto", "Gdansk", "Aarhus", "Graz", "Ghent", "Turin"]
    n = 0
    size = 0
    while size < target_chars:
        n += 1
        kind = rng.choice(kinds)
        ev = {
            "id": f"evt_{n:06d}",
            "kind": kind,
            "created_at": f"2026-03-{rng.randint(1, 13):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z",
            "order": {
                "id": f"ord_{rng.randint(1, 99999):06d}",
                "status": kind.split(".")[1],
                "customer_id": f"cus_{rid(rng, 10)}",
                "ship_to": {
                    "city": rng.choice(cities),
                    "postcode": f"{rng.randint(1000, 99999)}",
                    "country": rng.choice(["NL", "DE", "FR", "PT", "PL", "DK", "AT", "BE", "IT"]),
                },
                "parcels": [
                    {
                        "id": f"prc_{rid(rng, 8)}",
                        "weight_g": rng.randint(80, 24000),
                        "tracking_code": f"JJD{rng.randint(10**14, 10**15 - 1)}",
                        "carrier": rng.choice(["dhl", "ups", "dpd", "postnl"]),
                    }
                    for _ in range(rng.randint(1, 3))
                ],
            },
            "delivery": {"attempts": rng.randint(1, 4), "signature": "sha256=" + hexid(rng, 64)},
        }
        events.append(ev)
        size += len(json.dumps(ev, separators=(",", ":")))
    return json.dumps(
        {"version": 3, "recorded_at": "2026-03-13T17:02:11Z", "events": events},
        separators=(",", ":"),
    )


@dataclass
class Clock:
    """Wall-clock time of the recorded session, in ms since the epoch."""

    rng: random.Random
    ms: int
    history: list[int] = field(default_factory=list)

    def tick(self, lo: float, hi: float) -> int:
        self.ms += int(self.rng.uniform(lo, hi) * 1000)
        return self.ms

    def iso(self, ms: int | None = None) -> str:
        import datetime as _dt

        value = self.ms if ms is None else ms
        dt = _dt.datetime.fromtimestamp(value / 1000, tz=_dt.UTC)
        return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value % 1000:03d}Z"


def package_lock(rng: random.Random) -> str:
    """``web/package-lock.json`` (lockfile v3), pretty-printed the way npm writes it."""
    packages: dict[str, object] = {
        "": {
            "name": "parcelhub-dashboard",
            "version": "0.14.2",
            "dependencies": json.loads(PACKAGE_JSON)["dependencies"],
            "devDependencies": json.loads(PACKAGE_JSON)["devDependencies"],
        }
    }
    names = sorted(set(_NPM_PACKAGES))
    for name in names:
        ver = f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}"
        entry: dict[str, object] = {
            "version": ver,
            "resolved": f"https://registry.npmjs.org/{name}/-/{name.split('/')[-1]}-{ver}.tgz",
            "integrity": "sha512-"
            + "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(86))
            + "==",
        }
        if rng.random() < 0.6:
            entry["dev"] = True
        if rng.random() < 0.5:
            deps = rng.sample(names, rng.randint(1, 5))
            entry["dependencies"] = {
                d: f"^{rng.randint(0, 9)}.{rng.randint(0, 20)}.0" for d in sorted(deps)
            }
        if rng.random() < 0.3:
            entry["engines"] = {"node": f">={rng.choice([12, 14, 16, 18])}"}
        entry["license"] = rng.choice(["MIT", "MIT", "MIT", "ISC", "Apache-2.0", "BSD-3-Clause"])
        if name.startswith(("@esbuild/", "@rollup/")):
            entry["cpu"] = ["x64"]
            entry["os"] = ["linux"]
            entry["optional"] = True
        packages[f"node_modules/{name}"] = entry
    lock = {
        "name": "parcelhub-dashboard",
        "version": "0.14.2",
        "lockfileVersion": 3,
        "requires": True,
        "packages": packages,
    }
    return json.dumps(lock, indent=2) + "\n"


_CARRIER_EVENTS = [
    ("picked up", "shipped"),
    ("arrived at hub", "shipped"),
    ("departed hub", "shipped"),
    ("in transit", "shipped"),
    ("customs cleared", "shipped"),
    ("held at customs", "exception"),
    ("out for delivery", "shipped"),
    ("delivered", "delivered"),
    ("delivered to neighbour", "delivered"),
    ("delivered to parcel locker", "delivered"),
    ("delivery attempt failed", "exception"),
    ("address unknown", "exception"),
    ("returned to sender", "returned"),
    ("damaged", "exception"),
    ("label created", "placed"),
    ("awaiting pickup", "packed"),
    ("delayed by weather", "shipped"),
]


def carrier_codes(rng: random.Random) -> str:
    """``parcelhub/carrier_codes.py``: a generated table mapping carrier status codes to ours."""
    out = [
        '"""Carrier status codes -> parcelhub order status. Generated by scripts/gen_codes.py; do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        "# carrier, code, description, parcelhub status",
        "CODES: dict[tuple[str, str], tuple[str, str]] = {",
    ]
    for carrier in ("dhl", "ups", "fedex", "postnl", "dpd"):
        for k in range(rng.randint(70, 95)):
            desc, status = rng.choice(_CARRIER_EVENTS)
            code = f"{carrier[:2].upper()}{rng.randint(100, 999)}{chr(65 + k % 26)}"
            out.append(f"    ({carrier!r}, {code!r}): ({desc!r}, {status!r}),")
    out += [
        "}",
        "",
        "",
        "def map_status(carrier: str, code: str) -> str:",
        '    return CODES.get((carrier, code), ("unknown", "shipped"))[1]',
        "",
    ]
    return "\n".join(out)


def orders_tests() -> str:
    """``tests/test_orders.py``: API tests through the FastAPI test client."""
    out = [
        "import pytest",
        "",
        "",
        "def _order(client, **extra):",
        '    body = {"customer_id": "cus_1", "ship_to": {"name": "A. Tester", "line1": "Kade 1",',
        '            "city": "Rotterdam", "postcode": "3011", "country": "NL"}}',
        "    body.update(extra)",
        '    return client.post("/v1/orders", json=body).json()',
        "",
    ]
    for test in test_ids("tests/test_orders.py"):
        name = test.split("::")[1]
        out += ["", f"def {name}(client):", "    order = _order(client)"]
        if "404" in name:
            out += [
                '    r = client.get("/v1/orders/ord_missing")',
                "    assert r.status_code == 404",
            ]
        elif "paginates" in name:
            out += [
                "    for _ in range(4):",
                "        _order(client)",
                '    page = client.get("/v1/orders", params={"limit": 2}).json()',
                '    assert len(page["items"]) == 2',
                '    assert page["next"] is not None',
                '    rest = client.get("/v1/orders", params={"after": page["next"]}).json()',
                '    assert len(rest["items"]) == 3',
            ]
        elif "conflict" in name or "cannot" in name or "only" in name or "requires" in name:
            out += [
                "    r = client.post(f\"/v1/orders/{order['id']}/ship\", json={})",
                "    assert r.status_code == 409",
            ]
        else:
            out += [
                "    r = client.post(f\"/v1/orders/{order['id']}/place\")",
                "    assert r.status_code == 200",
                '    assert r.json()["status"] == "placed"',
            ]
    return "\n".join(out) + "\n"


def mypy_output(repo: Repo, rng: random.Random, n_errors: int) -> str:
    """``mypy --strict parcelhub`` run against the (untyped-in-places) code."""
    kinds = [
        ("Function is missing a type annotation for one or more arguments", "no-untyped-def"),
        ('Returning Any from function declared to return "{t}"', "no-any-return"),
        (
            'Argument 1 to "from_dict" of "{t}" has incompatible type "object"; expected "dict[str, object]"',
            "arg-type",
        ),
        ('Unused "type: ignore" comment', "unused-ignore"),
        ('Item "None" of "{t} | None" has no attribute "get"', "union-attr"),
        ('Call to untyped function "{f}" in typed context', "no-untyped-call"),
        (
            'Incompatible types in assignment (expression has type "object", variable has type "str | None")',
            "assignment",
        ),
    ]
    types = ["Order", "Address", "Parcel", "Subscription", "OrderEvent", "TrackingInfo"]
    funcs = ["render_label", "map_status", "connect", "_emit", "create_app"]
    files = [p for p in sorted(repo.files) if p.startswith("parcelhub/") and p.endswith(".py")]
    errors = []
    for _ in range(n_errors):
        path = rng.choice(files)
        n = rng.randint(1, max(1, repo.read(path).count("\n")))
        msg, code = rng.choice(kinds)
        errors.append((path, n, msg.format(t=rng.choice(types), f=rng.choice(funcs)), code))
    errors.sort()
    lines = [f"{p}:{n}: error: {m}  [{c}]" for p, n, m, c in errors]
    lines.append(
        f"Found {n_errors} errors in {len({e[0] for e in errors})} files (checked {len(files)} source files)"
    )
    return "\n".join(lines)


DATES_TS = """// Date helpers for the dashboard. The API sends ISO-8601 strings.
import { format, formatDistanceToNowStrict, parseISO } from "date-fns";

export function formatDay(value: string): string {
  return format(new Date(value), "d MMM yyyy");
}

export function formatTime(value: string): string {
  return format(new Date(value), "HH:mm");
}

export function ago(value: string): string {
  return formatDistanceToNowStrict(parseISO(value), { addSuffix: true });
}
"""

ORDERS_API_TS = """import { z } from "zod";

export const OrderSchema = z.object({
  id: z.string(),
  customer_id: z.string(),
  status: z.enum(["draft", "placed", "packed", "shipped", "delivered", "cancelled"]),
  created_at: z.string(),
  updated_at: z.string(),
  reference: z.string().nullable(),
});
export type Order = z.infer<typeof OrderSchema>;

const PageSchema = z.object({ items: z.array(OrderSchema), next: z.string().nullable() });

export async function listOrders(params: { after?: string; limit?: number; status?: string }) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined) query.set(key, String(value));
  }
  const res = await fetch(`${import.meta.env.VITE_API_BASE}/v1/orders?${query}`);
  if (!res.ok) throw new Error(`orders: HTTP ${res.status}`);
  return PageSchema.parse(await res.json());
}
"""

ORDERS_PAGE_TSX = """import { useQuery } from "@tanstack/react-query";
import { useState } from "react";

import { listOrders } from "../api/orders";
import { ago, formatDay } from "../lib/dates";

export function OrdersPage() {
  const [cursor, setCursor] = useState<string | undefined>();
  const { data, isLoading, error } = useQuery({
    queryKey: ["orders", cursor],
    queryFn: () => listOrders({ after: cursor, limit: 50 }),
  });
  if (isLoading) return <p className="muted">Loading orders…</p>;
  if (error) return <p className="error">{String(error)}</p>;
  return (
    <section>
      <h1>Orders</h1>
      <table className="orders">
        <thead>
          <tr><th>Order</th><th>Status</th><th>Created</th><th>Updated</th></tr>
        </thead>
        <tbody>
          {data!.items.map((o) => (
            <tr key={o.id}>
              <td>{o.reference ?? o.id}</td>
              <td><span className={`status status-${o.status}`}>{o.status}</span></td>
              <td title={o.created_at}>{formatDay(o.created_at)}</td>
              <td>{ago(o.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data!.next && <button onClick={() => setCursor(data!.next!)}>Next page</button>}
    </section>
  );
}
"""

DATES_TEST_TS = """import { describe, expect, it } from "vitest";

import { formatDay, formatTime } from "./dates";

describe("formatDay", () => {
  it("formats an ISO date with offset", () => {
    expect(formatDay("2026-03-13T17:02:11+00:00")).toBe("13 Mar 2026");
  });
  it("formats a date without seconds", () => {
    expect(formatDay("2026-03-13T17:02Z")).toBe("13 Mar 2026");
  });
});

describe("formatTime", () => {
  it("uses 24h clock", () => {
    expect(formatTime("2026-03-13T07:05:00Z")).toMatch(/^\\d\\d:05$/);
  });
});
"""


def vitest_output(rng: random.Random, failing: bool) -> str:
    lines = ["", " RUN  v2.1.8 /home/dev/src/parcelhub/web", ""]
    files = [
        ("src/lib/dates.test.ts", 3),
        ("src/api/orders.test.ts", 6),
        ("src/pages/Orders.test.tsx", 4),
        ("src/components/StatusBadge.test.tsx", 5),
        ("src/lib/money.test.ts", 7),
    ]
    failed = 0
    for name, n in files:
        bad = failing and name == "src/lib/dates.test.ts"
        mark = "\u276f" if bad else "\u2713"
        lines.append(
            f" {mark} {name} ({n} tests{' | 1 failed' if bad else ''}) {rng.randint(3, 90)}ms"
        )
        if bad:
            failed = 1
            lines.append("   \u00d7 formatDay > formats a date without seconds 4ms")
            lines.append("     \u2192 Invalid time value")
    if failed:
        lines += [
            "",
            "\u23af" * 20 + " Failed Tests 1 " + "\u23af" * 20,
            "",
            " FAIL  src/lib/dates.test.ts > formatDay > formats a date without seconds",
            "RangeError: Invalid time value",
            " \u276f format node_modules/date-fns/format.js:354:11",
            " \u276f Module.formatDay src/lib/dates.ts:5:10",
            "      3| ",
            "      4| export function formatDay(value: string): string {",
            '      5|   return format(new Date(value), "d MMM yyyy");',
            "       |          ^",
            "      6| }",
            " \u276f src/lib/dates.test.ts:10:12",
            "",
        ]
    total = sum(n for _, n in files)
    lines += [
        "",
        f" Test Files  {'1 failed | ' if failed else ''}{len(files) - failed} passed ({len(files)})",
        f"      Tests  {'1 failed | ' if failed else ''}{total - failed} passed ({total})",
        f"   Start at  09:4{rng.randint(0, 9)}:{rng.randint(10, 59)}",
        f"   Duration  {rng.uniform(0.8, 2.5):.2f}s (transform 212ms, setup 0ms, collect 1.31s, tests 58ms)",
        "",
    ]
    return "\n".join(lines)
