"""The command bus: registration, validation, middleware order, results as values, sync and async, origins."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import threading
from typing import Any

import pydantic
import pytest

from mcp_django.bus import (
    HANDLER_FAILED,
    INVALID_PAYLOAD,
    INVALID_TARGET,
    UNKNOWN_ACTION,
    ActionError,
    Bus,
    BusFrozen,
    CallNext,
    Command,
    Empty,
    Err,
    Metadata,
    Ok,
    all_buses,
    current_metadata,
    load_bus_modules,
)


class Ref(pydantic.BaseModel):
    id: int


class Title(pydantic.BaseModel):
    title: str = pydantic.Field(min_length=1)
    tags: list[str] = []


def make_bus() -> Bus:
    bus = Bus("tests")

    @bus.action("book.rename", target=Ref, payload=Title)
    def rename(target: Ref, payload: Title, meta: Metadata) -> dict[str, Any]:
        """Rename a book."""
        return {"id": target.id, "title": payload.title, "origin": meta.origin, "thread": threading.get_ident()}

    @bus.action("book.arename", target=Ref, payload=Title, description="Rename, asynchronously.")
    async def arename(target: Ref, payload: Title, meta: Metadata) -> dict[str, Any]:
        return {"id": target.id, "title": payload.title, "origin": meta.origin}

    @bus.action("book.fail")
    def fail(target: Empty, payload: Empty, meta: Metadata) -> None:
        raise RuntimeError("database password is hunter2")

    @bus.action("book.refuse")
    async def refuse(target: Empty, payload: Empty, meta: Metadata) -> None:
        raise ActionError("That book is locked.", code="locked")

    @bus.action("book.explicit")
    def explicit(target: Empty, payload: Empty, meta: Metadata) -> Err:
        return Err("nope", "Explicitly not.")

    return bus


# ---------------------------------------------------------------- registration


def test_actions_register_with_their_models_and_description_in_order() -> None:
    bus = make_bus()

    assert [action.name for action in bus.actions] == [
        "book.rename",
        "book.arename",
        "book.fail",
        "book.refuse",
        "book.explicit",
    ]
    rename = bus.get("book.rename")
    assert rename is not None
    assert (rename.target, rename.payload, rename.description) == (Ref, Title, "Rename a book.")
    assert bus.get("book.arename").description == "Rename, asynchronously."  # type: ignore[union-attr]
    assert bus.get("book.fail").target is Empty  # type: ignore[union-attr]
    assert "book.fail" in bus
    assert "nope" not in bus
    assert bus in all_buses()


def test_a_duplicate_name_or_a_model_that_is_not_pydantic_is_refused() -> None:
    bus = make_bus()

    with pytest.raises(ValueError, match=r"The bus .tests. already has an action .book\.rename."):
        bus.action("book.rename")
    with pytest.raises(TypeError, match="Action 'x': payload must be a pydantic BaseModel subclass"):
        bus.action("x", payload=dict)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="An action needs a non-empty name"):
        bus.action("")


def test_a_frozen_bus_refuses_actions_and_middleware() -> None:
    bus = make_bus()
    bus.freeze()

    with pytest.raises(BusFrozen, match="The bus 'tests' is frozen: add the action 'late' in a module named in"):
        bus.action("late")
    with pytest.raises(BusFrozen, match="add middleware"):
        bus.use(pass_through)


def test_ready_imported_the_demo_bus_modules_and_froze_every_bus() -> None:
    from example_project.demo.actions import bus

    assert bus.frozen
    assert [action.name for action in bus.actions] == [
        "catalogue.book.rename",
        "catalogue.book.describe",
        "catalogue.stats",
    ]


def test_load_bus_modules_imports_the_modules_app_configs_name() -> None:
    app = type("App", (), {"mcp_bus_modules": ["tests.bus_support"]})()
    load_bus_modules([app, object()])

    from tests.bus_support import support_bus

    assert support_bus.get("support.ping") is not None


# ---------------------------------------------------------------- results


async def test_a_dispatch_returns_ok_with_the_value() -> None:
    result = await make_bus().dispatch("book.arename", {"id": 3}, {"title": "Dune"})

    assert result == Ok({"id": 3, "title": "Dune", "origin": None})
    assert result.ok


async def test_an_unknown_action_is_an_error_result() -> None:
    assert await make_bus().dispatch("book.burn", {}, {}) == Err(UNKNOWN_ACTION, "Unknown action: book.burn")


async def test_an_invalid_target_is_an_error_naming_the_field() -> None:
    result = await make_bus().dispatch("book.rename", {"id": "three"}, {"title": "Dune"})

    assert result == Err(
        INVALID_TARGET,
        "target.id: Input should be a valid integer, unable to parse string as an integer",
        "target.id",
    )


async def test_an_invalid_payload_names_every_bad_field_and_never_echoes_the_input() -> None:
    result = await make_bus().dispatch("book.rename", {"id": 1}, {"title": "", "tags": ["ok", 7]})

    assert isinstance(result, Err)
    assert (result.code, result.field) == (INVALID_PAYLOAD, "payload.title")
    assert result.message == (
        "payload.title: String should have at least 1 character; payload.tags.1: Input should be a valid string"
    )


async def test_a_missing_payload_is_an_empty_object() -> None:
    result = await make_bus().dispatch("book.rename", {"id": 1})

    assert result == Err(INVALID_PAYLOAD, "payload.title: Field required", "payload.title")


async def test_an_exception_in_an_action_is_an_error_without_its_detail_and_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.ERROR, logger="mcp_django.bus"):
        result = await make_bus().dispatch("book.fail")

    assert result == Err(HANDLER_FAILED, "Action book.fail failed.")
    assert "hunter2" not in result.message
    assert "hunter2" in caplog.text


async def test_an_action_error_and_an_err_returned_are_the_actions_own_results() -> None:
    bus = make_bus()

    assert await bus.dispatch("book.refuse") == Err("locked", "That book is locked.")
    assert await bus.dispatch("book.explicit") == Err("nope", "Explicitly not.")


async def test_sync_actions_run_in_a_worker_thread_and_async_ones_on_the_loop() -> None:
    result = await make_bus().dispatch("book.rename", {"id": 1}, {"title": "Dune"})

    assert isinstance(result, Ok)
    assert result.value["thread"] != threading.get_ident()


@pytest.mark.django_db
def test_dispatch_sync_serves_sync_code_such_as_a_view_with_no_origin() -> None:
    result = make_bus().dispatch_sync("book.rename", Ref(id=2), Title(title="Emma"))

    assert isinstance(result, Ok)
    assert (result.value["title"], result.value["origin"]) == ("Emma", None)


# ---------------------------------------------------------------- middleware


async def pass_through(command: Command, call_next: CallNext) -> Ok[Any] | Err:
    return await call_next(command)


def tracing(log: list[str], name: str) -> Any:
    async def middleware(command: Command, call_next: CallNext) -> Ok[Any] | Err:
        log.append(f"{name}>")
        result = await call_next(command)
        log.append(f"<{name}")
        return result

    return middleware


async def test_middleware_runs_by_descending_priority_and_keeps_the_order_added_on_ties() -> None:
    bus, log = make_bus(), list[str]()
    bus.use(tracing(log, "low"), priority=-5)
    bus.use(tracing(log, "tie-1"))
    bus.use(tracing(log, "high"), priority=150)
    bus.use(tracing(log, "tie-2"))
    bus.use(tracing(log, "tie-3"), priority=0)

    await bus.dispatch("book.arename", {"id": 1}, {"title": "x"})

    assert log == ["high>", "tie-1>", "tie-2>", "tie-3>", "low>", "<low", "<tie-3", "<tie-2", "<tie-1", "<high"]


async def test_middleware_can_short_circuit_and_the_action_never_runs() -> None:
    bus, ran = Bus("short"), []

    @bus.action("go")
    def go(target: Empty, payload: Empty, meta: Metadata) -> str:
        ran.append("go")
        return "went"

    @bus.use
    async def deny(command: Command, call_next: CallNext) -> Ok[Any] | Err:
        return Err("denied", f"{command.action} is not allowed for {command.metadata.origin}.")

    assert await bus.dispatch("go", metadata=Metadata(origin="agent")) == Err("denied", "go is not allowed for agent.")
    assert ran == []


async def test_middleware_can_alter_the_command_and_the_result() -> None:
    bus = make_bus()

    @bus.use
    async def shout(command: Command, call_next: CallNext) -> Ok[Any] | Err:
        payload = command.payload.model_copy(update={"title": command.payload.title.upper()})
        result = await call_next(dataclasses.replace(command, payload=payload))
        return Ok({**result.value, "altered": True}) if isinstance(result, Ok) else result

    result = await bus.dispatch("book.arename", {"id": 1}, {"title": "dune"})

    assert result == Ok({"id": 1, "title": "DUNE", "origin": None, "altered": True})


async def test_what_middleware_passes_on_is_validated_again() -> None:
    bus = make_bus()

    @bus.use
    async def corrupt(command: Command, call_next: CallNext) -> Ok[Any] | Err:
        return await call_next(dataclasses.replace(command, payload={"title": ""}))

    result = await bus.dispatch("book.arename", {"id": 1}, {"title": "dune"})

    assert result == Err(INVALID_PAYLOAD, "payload.title: String should have at least 1 character", "payload.title")


async def test_a_failing_middleware_is_an_error_result_and_an_action_error_its_own() -> None:
    bus = make_bus()

    @bus.use
    def broken(command: Command, call_next: CallNext) -> Any:
        if command.action == "book.refuse":
            raise ActionError("Closed today.", code="closed")
        raise KeyError("secret")

    assert await bus.dispatch("book.arename", {"id": 1}, {"title": "x"}) == Err(
        HANDLER_FAILED, "Action book.arename failed."
    )
    assert await bus.dispatch("book.refuse") == Err("closed", "Closed today.")


async def test_sync_middleware_may_return_the_next_steps_awaitable() -> None:
    bus = make_bus()
    bus.use(lambda command, call_next: call_next(command))

    assert (await bus.dispatch("book.arename", {"id": 1}, {"title": "x"})).ok


# ---------------------------------------------------------------- origin


async def test_the_origin_travels_in_the_metadata_to_middleware_actions_and_current_metadata() -> None:
    bus, seen = Bus("origin"), []

    @bus.action("who")
    def who(target: Empty, payload: Empty, meta: Metadata) -> tuple[str | None, str | None]:
        current = current_metadata()
        return meta.origin, current.origin if current else "none"

    @bus.use
    async def observe(command: Command, call_next: CallNext) -> Ok[Any] | Err:
        seen.append(command.metadata.origin)
        return await call_next(command)

    assert await bus.dispatch("who", metadata=Metadata(origin="agent")) == Ok(("agent", "agent"))
    assert await bus.dispatch("who") == Ok((None, None))
    assert seen == ["agent", None]
    assert current_metadata() is None


async def test_concurrent_dispatches_each_keep_their_own_origin() -> None:
    bus = Bus("concurrent")

    @bus.action("who", payload=Ref)
    async def who(target: Empty, payload: Ref, meta: Metadata) -> tuple[int, str | None, str | None]:
        await asyncio.sleep(0)  # interleave with the other dispatches
        current = current_metadata()
        return payload.id, meta.origin, current.origin if current else None

    @bus.action("swho", payload=Ref)
    def swho(target: Empty, payload: Ref, meta: Metadata) -> tuple[int, str | None, str | None]:
        current = current_metadata()
        return payload.id, meta.origin, current.origin if current else None

    def origin(index: int) -> str | None:
        return "agent" if index % 2 else None

    results = await asyncio.gather(
        *(
            bus.dispatch("who" if index % 3 else "swho", payload={"id": index}, metadata=Metadata(origin=origin(index)))
            for index in range(200)
        )
    )

    assert [result.value for result in results if isinstance(result, Ok)] == [
        (index, origin(index), origin(index)) for index in range(200)
    ]
