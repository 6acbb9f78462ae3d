"""Resumable SSE buffers (mcp_django.transports.resumable), in memory."""

from __future__ import annotations

from mcp_django.transports.resumable import BufferRegistry, EventBuffer


async def test_a_follower_gets_the_messages_that_came_while_it_held_one_even_when_the_stream_then_finished() -> None:
    buffer = EventBuffer("session")
    buffer.append({"n": 1})
    seen = []
    async for number, message in buffer.follow(0):
        seen.append((number, message["n"]))
        if number == 1:  # the caller is still busy with the first (writing it to a slow client, relaying it)
            buffer.append({"n": 2})
            buffer.append({"n": 3})
            buffer.finish()
    assert seen == [(1, 1), (2, 2), (3, 3)]


def test_an_event_id_naming_an_owner_channel_with_dots_finds_its_buffer() -> None:
    registry = BufferRegistry()
    buffer = registry.open("session", owner="specific.abc123!def456")
    buffer.append({"n": 1})
    found = registry.find(buffer.event_id(1), "session")
    assert found == (buffer, 1)
    assert registry.find(buffer.event_id(1), "another session") is None
