"""The catalogues `tokens.py` measures: the demo's hub with its remotes served in process, and a generated
project of 50 models, each with a `ModelToolset` (list, get, create, update, delete: 250 tools).

The 50 models are built in this process (`models_50()`), under an app label of their own that no
migration knows: listing their tools reads no table, so none is created. The hub's remotes (the
conformance fixture and the books endpoint, `SERVERS["conformance"]` and `["books"]`) are the example
project's own endpoints, reached through the MCP client as in `make demo`, only in process
(`InProcessEndpoint`) instead of over a loopback socket.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from django.db import models

from mcp_django.client.remote import RemoteConnection
from mcp_django.client.streams import NotificationListener
from mcp_django.protocol import Connection, MessageHandler
from mcp_django.protocol.jsonrpc import Message, notification
from mcp_django.scopes import Scope
from mcp_django.toolsets import ModelToolset

# fifty business models, three fields of their own each (besides `name`)
MODELS: Final = [
    "author:birth_year,country,biography",
    "book:title,isbn,published",
    "publisher:city,founded,website",
    "customer:email,phone,segment",
    "invoice:number,total,due_date",
    "order:reference,status,placed_at",
    "product:sku,price,stock",
    "supplier:contact,country,rating",
    "warehouse:city,capacity,manager",
    "shipment:carrier,tracking_code,shipped_at",
    "payment:amount,method,paid_at",
    "refund:amount,reason,issued_at",
    "employee:email,department,hired_at",
    "department:code,budget,head",
    "project:code,deadline,budget",
    "task:title,due_date,priority",
    "ticket:subject,severity,opened_at",
    "comment:body,author,posted_at",
    "campaign:channel,budget,starts_at",
    "lead:email,source,score",
    "opportunity:stage,amount,close_date",
    "contract:number,signed_at,expires_at",
    "vendor:email,category,rating",
    "asset:tag,location,value",
    "license:key,seats,expires_at",
    "meeting:topic,starts_at,room",
    "room:building,floor,capacity",
    "course:code,credits,teacher",
    "student:email,enrolled_at,grade",
    "enrollment:term,status,grade",
    "patient:birth_date,insurer,ward",
    "appointment:starts_at,doctor,reason",
    "prescription:drug,dose,issued_at",
    "vehicle:plate,make,mileage",
    "driver:license_number,phone,rating",
    "route:origin,destination,distance",
    "recipe:cuisine,servings,minutes",
    "ingredient:unit,calories,allergen",
    "menu:season,price,chef",
    "event:venue,starts_at,capacity",
    "venue:city,address,capacity",
    "sponsor:tier,amount,contact",
    "article:headline,published_at,section",
    "subscriber:email,plan,renews_at",
    "newsletter:subject,sent_at,audience",
    "repository:url,language,stars",
    "release:version,released_at,notes",
    "incident:severity,started_at,summary",
    "shift:role,starts_at,ends_at",
    "review:score,body,posted_at",
]


def _model(label: str, noun: str, fields: list[str]) -> type[models.Model]:
    attributes: dict[str, Any] = {"__module__": __name__, "name": models.CharField(max_length=200)}
    for field in fields:
        if field.endswith(("_at", "_date", "published", "founded")):
            attributes[field] = models.DateTimeField(null=True)
        elif field in ("total", "price", "amount", "budget", "value", "distance", "rating", "score"):
            attributes[field] = models.DecimalField(max_digits=12, decimal_places=2, null=True)
        elif field in ("stock", "capacity", "seats", "credits", "servings", "minutes", "calories", "stars"):
            attributes[field] = models.IntegerField(null=True)
        else:
            attributes[field] = models.CharField(max_length=200, blank=True)
    attributes["Meta"] = type("Meta", (), {"app_label": label, "verbose_name": noun.replace("_", " ")})
    return type(noun.title().replace("_", ""), (models.Model,), attributes)


_built: list[ModelToolset] = []


def models_50(label: str = "models50") -> list[ModelToolset]:
    """The toolsets of the 50 models (built once per process): every field listed, filtered and ordered."""
    if not _built:
        for entry in MODELS:
            noun, _, fields = entry.partition(":")
            model = _model(label, noun, fields.split(","))
            names = ["id", "name", *fields.split(",")]
            attributes = {
                "__doc__": f"The {noun.replace('_', ' ')} records: find, read and edit them.",
                "id": f"{label}.{noun}",
                "model": model,
                "fields": names,
                "filters": {"name": ["icontains"], **{field: ["exact"] for field in names[2:]}},
                "ordering": names[1:],
                "actions": ["list", "get", "create", "update", "delete"],
            }
            _built.append(type(f"{model.__name__}Toolset", (ModelToolset,), attributes)())
    return list(_built)


class InProcessEndpoint(RemoteConnection):
    """A remote that is an endpoint of this project, served in process: `{"BACKEND": "benchmarks.catalogues.
    InProcessEndpoint", "ENDPOINT": "books"}`; it answers as over HTTP to an anonymous caller (USER scope)."""

    transport = "memory"
    config_keys = frozenset({"ENDPOINT"})

    @classmethod
    def config_problems(cls, config: Mapping[str, Any]) -> list[str]:
        return [] if isinstance(config.get("ENDPOINT"), str) else ["ENDPOINT must name a mounted endpoint"]

    @classmethod
    def location(cls, config: Mapping[str, Any]) -> str:
        return f"endpoint {config['ENDPOINT']}"

    _handler: MessageHandler | None = None

    async def _start(self) -> None:
        from mcp_django.endpoints import get_endpoint

        endpoint = get_endpoint(dict(self.server.options)["ENDPOINT"])
        self._handler = endpoint.handler
        self._peer: Connection = endpoint.connection(None, transport="memory", admitted_scope=Scope.USER)

    async def _round_trip(self, request: Message, on_notification: NotificationListener | None) -> Message:
        assert self._handler is not None
        answer: Message = {}
        async for item in self._handler.stream(request, self._peer):
            if "method" in item:
                await self.dispatch(item, on_notification)
            else:
                answer = item
        return answer

    async def _notify(self, method: str, params: dict[str, Any] | None) -> None:
        assert self._handler is not None
        await self._handler.handle(notification(method, params), self._peer)

    async def _listen(self) -> bool:
        return False

    async def _stop(self) -> None:
        self._handler = None
