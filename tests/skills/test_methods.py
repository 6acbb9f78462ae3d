"""skills/list, skills/get, resources/directory/read and the skill files as resources, in both eras."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import override_settings

from mcp_django.protocol.context import RequestContext
from mcp_django.protocol.hooks import CallNext
from mcp_django.scopes import Scope
from mcp_django.skills.catalogue import MAX_FILE_BYTES, Catalogue, digest_of
from tests.skills.support import handshake, serve, stateless, write_skill


@pytest.fixture
def skills(tmp_path: Path) -> Catalogue:
    write_skill(tmp_path, "alpha", files={"references/guide.md": "# Guide\n", "references/deep/x.txt": "x"})
    write_skill(tmp_path, "beta", files={"logo.png": b"\x89PNG\r\n\x1a\n\0"})
    write_skill(tmp_path, "gamma")
    return Catalogue([("tests", tmp_path)])


async def test_skills_list_pages_whole_entries_until_no_cursor_is_left(skills: Catalogue) -> None:
    handler, _ = serve(skills, page_size=2)
    first = (await stateless(handler, "skills/list"))["result"]
    assert [entry["uri"] for entry in first["skills"]] == ["skill://alpha/SKILL.md", "skill://beta/SKILL.md"]
    assert first["skills"][0] == skills.skills[0].entry()
    second = (await stateless(handler, "skills/list", {"cursor": first["nextCursor"]}))["result"]
    assert [entry["uri"] for entry in second["skills"]] == ["skill://gamma/SKILL.md"]
    assert "nextCursor" not in second
    assert (first["ttlMs"], first["cacheScope"], first["resultType"]) == (5000, "public", "complete")


async def test_a_cursor_the_server_did_not_mint_is_invalid_params(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    reply = await stateless(handler, "skills/list", {"cursor": "forged"})
    assert reply["error"] == {"code": -32602, "message": "Invalid cursor"}


async def test_skills_get_returns_the_listed_entry_with_cache_attributes_and_no_cursor(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    result = (await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]
    assert result["skill"] == {
        "uri": "skill://alpha/SKILL.md",
        "frontmatter": {"name": "alpha", "description": "The alpha skill."},
        "resources": [file.entry() for file in skills.skills[0].files],
    }
    assert [resource["uri"] for resource in result["skill"]["resources"]] == [
        "skill://alpha/SKILL.md",
        "skill://alpha/references/deep/x.txt",
        "skill://alpha/references/guide.md",
    ]
    assert (result["ttlMs"], result["cacheScope"]) == (5000, "public")
    assert "nextCursor" not in result


@pytest.mark.parametrize(
    "uri", ["skill://missing/SKILL.md", "skill://alpha/references/guide.md", "skill://alpha", "alpha"]
)
async def test_skills_get_of_anything_but_a_served_skill_md_is_invalid_params(skills: Catalogue, uri: str) -> None:
    handler, _ = serve(skills)
    reply = await stateless(handler, "skills/get", {"uri": uri})
    assert reply["error"] == {"code": -32602, "message": f"No skill is served at {uri}"}


async def test_skills_get_without_a_uri_is_invalid_params(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    reply = await stateless(handler, "skills/get", {"uri": 3})
    assert reply["error"] == {"code": -32602, "message": "Invalid params: uri must be a non-empty string"}


async def test_the_handshake_era_serves_the_methods_and_advertises_the_extension_under_experimental(
    skills: Catalogue,
) -> None:
    handler, _ = serve(skills)
    opened = await handshake(handler, "initialize")
    assert opened["result"]["capabilities"]["experimental"] == {
        "io.modelcontextprotocol/skills": {"directoryRead": True}
    }
    result = (await handshake(handler, "skills/get", {"uri": "skill://gamma/SKILL.md"}))["result"]
    assert result == {"skill": skills.skills[2].entry()}  # no cache attributes before 2026-07-28
    listed = (await handshake(handler, "skills/list"))["result"]
    assert len(listed["skills"]) == 3


async def test_the_stateless_era_advertises_the_extension_and_resources(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    capabilities = (await stateless(handler, "server/discover"))["result"]["capabilities"]
    assert capabilities["extensions"] == {"io.modelcontextprotocol/skills": {"directoryRead": True}}
    assert "resources" in capabilities


async def test_resources_list_names_each_skill_md_from_its_front_matter(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    resources = (await stateless(handler, "resources/list"))["result"]["resources"]
    assert resources[0] == {
        "uri": "skill://alpha/SKILL.md",
        "name": "alpha",
        "description": "The alpha skill.",
        "mimeType": "text/markdown",
        "size": skills.skills[0].files[0].size,
    }
    assert [resource["uri"] for resource in resources] == [skill.uri for skill in skills.skills]


async def test_a_text_file_is_read_as_text_and_a_binary_one_as_a_blob_with_their_mime_types(
    skills: Catalogue,
) -> None:
    handler, _ = serve(skills)
    text = (await stateless(handler, "resources/read", {"uri": "skill://alpha/references/guide.md"}))["result"]
    assert text["contents"] == [
        {"uri": "skill://alpha/references/guide.md", "mimeType": "text/markdown", "text": "# Guide\n"}
    ]
    blob = (await stateless(handler, "resources/read", {"uri": "skill://beta/logo.png"}))["result"]
    assert blob["contents"] == [
        {
            "uri": "skill://beta/logo.png",
            "mimeType": "image/png",
            "blob": base64.b64encode(b"\x89PNG\r\n\x1a\n\0").decode(),
        }
    ]


@pytest.mark.parametrize(
    "uri",
    [
        "skill://alpha/../beta/SKILL.md",
        "skill://alpha/references/../SKILL.md",
        "skill://alpha//SKILL.md",
        "skill://alpha",
    ],
)
async def test_only_uris_of_the_manifest_are_read_never_a_path_joined_from_one(skills: Catalogue, uri: str) -> None:
    handler, _ = serve(skills)
    reply = await stateless(handler, "resources/read", {"uri": uri})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"] == f"Resource not found: {uri}"


async def test_a_directory_read_lists_direct_children_with_subdirectories_as_directories(skills: Catalogue) -> None:
    handler, _ = serve(skills)
    root = (await stateless(handler, "resources/directory/read", {"uri": "skill://alpha"}))["result"]
    assert root["resources"] == [
        {
            "uri": "skill://alpha/SKILL.md",
            "name": "SKILL.md",
            "mimeType": "text/markdown",
            "size": skills.skills[0].files[0].size,
        },
        {"uri": "skill://alpha/references", "name": "references", "mimeType": "inode/directory"},
    ]
    nested = (await stateless(handler, "resources/directory/read", {"uri": "skill://alpha/references"}))["result"]
    assert [(child["name"], child["mimeType"]) for child in nested["resources"]] == [
        ("deep", "inode/directory"),
        ("guide.md", "text/markdown"),
    ]


@pytest.mark.parametrize("uri", ["skill://alpha/SKILL.md", "skill://alpha/references/", "skill://nothing"])
async def test_a_directory_read_of_anything_but_a_skill_directory_is_invalid_params(
    skills: Catalogue, uri: str
) -> None:
    handler, _ = serve(skills)
    reply = await stateless(handler, "resources/directory/read", {"uri": uri})
    assert reply["error"] == {"code": -32602, "message": f"{uri} is not a directory resource"}


async def test_a_file_changed_on_disk_is_served_as_it_is_now_and_skills_get_gives_its_new_digest(
    skills: Catalogue, tmp_path: Path
) -> None:
    handler, _ = serve(skills)
    guide = tmp_path / "alpha" / "references" / "guide.md"
    guide.write_text("# Guide, second edition\n")
    read = (await stateless(handler, "resources/read", {"uri": "skill://alpha/references/guide.md"}))["result"]
    assert read["contents"][0]["text"] == "# Guide, second edition\n"
    entry = (await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]["skill"]
    listed = {resource["uri"]: resource for resource in entry["resources"]}
    assert listed["skill://alpha/references/guide.md"]["digest"] == digest_of(b"# Guide, second edition\n")
    names = [entry["frontmatter"]["name"] for entry in (await stateless(handler, "skills/list"))["result"]["skills"]]
    assert names == ["alpha", "beta", "gamma"]  # read again in place


async def test_a_file_removed_from_disk_is_not_found_and_leaves_the_manifest(skills: Catalogue, tmp_path: Path) -> None:
    handler, _ = serve(skills)
    (tmp_path / "alpha" / "references" / "guide.md").unlink()
    reply = await stateless(handler, "resources/read", {"uri": "skill://alpha/references/guide.md"})
    assert reply["error"]["code"] == -32602
    entry = (await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]["skill"]
    assert "skill://alpha/references/guide.md" not in {resource["uri"] for resource in entry["resources"]}


async def test_a_file_grown_past_16_mib_on_disk_is_not_read_whole_and_not_found(
    skills: Catalogue, tmp_path: Path
) -> None:
    handler, _ = serve(skills)
    with (tmp_path / "alpha" / "references" / "guide.md").open("r+b") as guide:
        guide.truncate(MAX_FILE_BYTES + 1)  # sparse: a 300 MB file was read whole, then base64-encoded
    reply = await stateless(handler, "resources/read", {"uri": "skill://alpha/references/guide.md"})
    assert reply["error"]["code"] == -32602
    entry = (await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"}))["result"]["skill"]
    assert "skill://alpha/references/guide.md" not in {resource["uri"] for resource in entry["resources"]}


async def no_scope(ctx: RequestContext) -> Scope | None:
    return None


async def test_a_caller_who_does_not_reach_the_skills_sees_none_and_reads_none(skills: Catalogue) -> None:
    handler, _ = serve(skills, scopes=no_scope)
    assert (await stateless(handler, "skills/list"))["result"]["skills"] == []
    assert (await stateless(handler, "resources/list"))["result"]["resources"] == []
    for method, uri in [
        ("skills/get", "skill://alpha/SKILL.md"),
        ("resources/read", "skill://alpha/SKILL.md"),
        ("resources/directory/read", "skill://alpha"),
    ]:
        reply: dict[str, Any] = await stateless(handler, method, {"uri": uri})
        assert reply["error"]["code"] == -32602, method


async def test_a_skill_source_above_the_callers_scope_is_out_of_reach(skills: Catalogue) -> None:
    async def user(ctx: RequestContext) -> Scope | None:
        return Scope.USER

    handler, _ = serve(skills, scopes=user, scope=Scope.TEAM)
    assert (await stateless(handler, "skills/list"))["result"]["skills"] == []
    reply = await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"})
    assert reply["error"] == {"code": -32602, "message": "No skill is served at skill://alpha/SKILL.md"}


async def test_a_skill_given_a_scope_is_absent_and_unknown_to_callers_below_it(skills: Catalogue) -> None:
    async def user(ctx: RequestContext) -> Scope | None:
        return Scope.USER

    async def team(ctx: RequestContext) -> Scope | None:
        return Scope.TEAM

    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SKILL_SCOPES": {"beta": "team"}}):
        below, _ = serve(skills, scopes=user)
        listed = (await stateless(below, "skills/list"))["result"]["skills"]
        assert [entry["frontmatter"]["name"] for entry in listed] == ["alpha", "gamma"]
        resources = (await stateless(below, "resources/list"))["result"]["resources"]
        assert [resource["name"] for resource in resources] == ["alpha", "gamma"]
        for method, uri in [
            ("skills/get", "skill://beta/SKILL.md"),
            ("resources/read", "skill://beta/logo.png"),
            ("resources/directory/read", "skill://beta"),
        ]:
            reply = await stateless(below, method, {"uri": uri})
            assert reply["error"]["code"] == -32602, method
        reached, _ = serve(skills, scopes=team)
        listed = (await stateless(reached, "skills/list"))["result"]["skills"]
        assert [entry["frontmatter"]["name"] for entry in listed] == ["alpha", "beta", "gamma"]
        assert "result" in await stateless(reached, "resources/read", {"uri": "skill://beta/logo.png"})


async def test_the_skill_methods_are_operations_that_the_endpoints_hooks_wrap(skills: Catalogue) -> None:
    seen: list[str] = []

    async def record(method: str, params: dict[str, Any], ctx: RequestContext, call_next: CallNext) -> dict[str, Any]:
        seen.append(method)
        return await call_next(params)

    handler, _ = serve(skills, hooks=[record])
    await stateless(handler, "skills/list")
    await stateless(handler, "skills/get", {"uri": "skill://alpha/SKILL.md"})
    await stateless(handler, "resources/directory/read", {"uri": "skill://alpha"})
    assert seen == ["skills/list", "skills/get", "resources/directory/read"]
