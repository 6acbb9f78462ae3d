"""The Skills extension's system checks: E130-E138 and W130-W132, each asserted whole."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.checks import Error, Warning
from django.test import override_settings

from mcp_django.checks.endpoints import check_endpoint_extensions
from mcp_django.extensions import check_extensions
from mcp_django.scopes import Scope
from mcp_django.skills import SkillsExtension
from mcp_django.skills.catalogue import MAX_FILE_BYTES, catalogue
from mcp_django.skills.source import skill_scope
from tests.skills.support import write_skill


def with_settings(**overrides: Any) -> Any:
    return override_settings(MCP_DJANGO={**settings.MCP_DJANGO, **overrides})


@pytest.fixture
def skills_dir(tmp_path: Path) -> Iterator[Path]:
    """A SKILL_DIRS directory, served for the test (the example project's skills are served too)."""
    with with_settings(SKILL_DIRS=[str(tmp_path)]):
        yield tmp_path


def checks() -> list[Any]:
    return SkillsExtension().check()


def test_the_example_project_passes_and_its_checks_run_once_though_only_its_endpoints_name_it() -> None:
    assert checks() == []
    with with_settings(SKILL_DIRS="skills"):
        assert [message.id for message in check_extensions()] == []  # not installed
        assert [message.id for message in check_endpoint_extensions()] == ["mcp_django_skills.E136"]


def test_a_skill_md_without_front_matter_is_e130_and_not_served(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "plain", "# Just markdown\n")
    assert checks() == [
        Error(
            "Skill 'plain' (SKILL_DIRS): SKILL.md has no YAML front matter.",
            hint="Begin SKILL.md with a --- line, the YAML, and another --- line.",
            obj=str(directory),
            id="mcp_django_skills.E130",
        )
    ]
    assert "plain" not in {skill.name for skill in catalogue().skills}


@pytest.mark.parametrize(
    ("front_matter", "problem"),
    [
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: x\nname: y\n---\n", "the key 'name' appears twice"),
        ("---\nname: [\n---\n", "not YAML: expected the node content, but found '<stream end>'"),
        ("---\nname: x\nsize: .inf\n---\n", "front matter.size is inf, which JSON cannot carry"),
    ],
)
def test_front_matter_that_is_no_mapping_of_json_values_is_e131(
    skills_dir: Path, front_matter: str, problem: str
) -> None:
    directory = write_skill(skills_dir, "odd", front_matter)
    hint = f"Fix it: {problem}." if len(problem) <= 60 else f"Fix it: {problem[:57]}...."
    assert checks() == [
        Error(
            "Skill 'odd' (SKILL_DIRS): front matter is not a YAML mapping.",
            hint=hint,
            obj=str(directory),
            id="mcp_django_skills.E131",
        )
    ]


def test_front_matter_without_a_description_is_e132(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "terse", "---\nname: terse\ndescription: ''\n---\n")
    assert checks() == [
        Error(
            "Skill 'terse' (SKILL_DIRS): front matter has no description.",
            hint="Add description: to the front matter of SKILL.md.",
            obj=str(directory),
            id="mcp_django_skills.E132",
        )
    ]


def test_a_name_that_is_not_the_directorys_is_e133(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "book-search", "---\nname: search\ndescription: d\n---\n")
    assert checks() == [
        Error(
            "Skill 'book-search' (SKILL_DIRS): name is not the directory's.",
            hint="It is 'search': set name: book-search, or rename the directory.",
            obj=str(directory),
            id="mcp_django_skills.E133",
        )
    ]
    served = catalogue().get("skill://book-search/SKILL.md")
    assert served is not None
    assert served.origin == "demo"  # the app's skill is served instead


def test_a_name_the_naming_rules_refuse_is_e134(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "Book--Search", "---\nname: Book--Search\ndescription: d\n---\n")
    assert checks() == [
        Error(
            "Skill 'Book--Search' (SKILL_DIRS): name breaks the naming rules.",
            hint="Use 1-64 lowercase letters, digits and single inner hyphens.",
            obj=str(directory),
            id="mcp_django_skills.E134",
        )
    ]


def test_a_name_with_a_trailing_newline_is_e134(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "search\n", '---\nname: "search\\n"\ndescription: d\n---\n')
    assert checks() == [
        Error(
            "Skill 'search\\n' (SKILL_DIRS): name breaks the naming rules.",
            hint="Use 1-64 lowercase letters, digits and single inner hyphens.",
            obj=str(directory),
            id="mcp_django_skills.E134",
        )
    ]


def test_a_skill_md_that_is_not_utf8_is_e135(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "latin")
    (directory / "SKILL.md").write_bytes(b"---\nname: latin\ndescription: caf\xe9\n---\n")
    assert checks() == [
        Error(
            "Skill 'latin' (SKILL_DIRS): SKILL.md cannot be read.",
            hint="It is not UTF-8 text: save it as UTF-8.",
            obj=str(directory),
            id="mcp_django_skills.E135",
        )
    ]


def test_an_unreadable_supporting_file_is_e135_and_left_out_of_the_manifest(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "broken")
    os.symlink(directory / "gone.md", directory / "notes.md")  # a link to nothing: reading it fails
    assert checks() == [
        Error(
            "Skill 'broken' (SKILL_DIRS): notes.md cannot be read.",
            hint="FileNotFoundError: No such file or directory.",
            obj=str(directory),
            id="mcp_django_skills.E135",
        )
    ]
    assert catalogue().get("skill://broken/SKILL.md") is not None
    assert catalogue().file("skill://broken/notes.md") is None


def test_skills_dirs_that_are_not_a_list_of_directories_are_e136(tmp_path: Path) -> None:
    with with_settings(SKILL_DIRS="skills"):
        assert checks() == [
            Error(
                "MCP_DJANGO['SKILL_DIRS'] must be a list of paths.",
                hint="Set it to a list of paths, each a directory of skill directories.",
                id="mcp_django_skills.E136",
            )
        ]
    with with_settings(SKILL_DIRS=[str(tmp_path / "missing")]):
        assert checks() == [
            Error(
                f"MCP_DJANGO['SKILL_DIRS'] names '...{str(tmp_path / 'missing')[-25:]}', not a directory.",
                hint="Create it, or remove it from SKILL_DIRS.",
                id="mcp_django_skills.E136",
            )
        ]


def test_skill_scopes_that_name_no_scope_are_e138_and_hide_the_skill() -> None:
    with with_settings(SKILL_SCOPES={"book-search": "admin"}):
        assert checks() == [
            Error(
                "MCP_DJANGO['SKILL_SCOPES']['book-search'] names no scope.",
                hint="It is 'admin': use USER, TEAM or SYSTEM (until then: SYSTEM).",
                id="mcp_django_skills.E138",
            )
        ]
        assert skill_scope("book-search") is Scope.SYSTEM
    with with_settings(SKILL_SCOPES=["book-search"]):
        assert checks() == [
            Error(
                "MCP_DJANGO['SKILL_SCOPES'] must be a dict.",
                hint='Map skill names to scope names: {"catalogue-report": "TEAM"}.',
                id="mcp_django_skills.E138",
            )
        ]


def test_a_skill_over_the_limits_is_w130_and_still_served(skills_dir: Path) -> None:
    half = b"\0" * (8 * 1024 * 1024 + 1)  # two files, each under the 16 MiB a file may take (W134)
    directory = write_skill(skills_dir, "huge", files={"one.bin": half, "two.bin": half})
    assert checks() == [
        Warning(
            "Skill 'huge' (SKILL_DIRS): over the limit of 512 files or 16 MiB.",
            hint="Hosts may refuse it: split it into smaller skills.",
            obj=str(directory),
            id="mcp_django_skills.W130",
        )
    ]
    assert catalogue().get("skill://huge/SKILL.md") is not None


def test_a_file_linking_outside_the_skill_is_w131(skills_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    outside = tmp_path_factory.mktemp("outside") / "settings.py"
    outside.write_text("SECRET_KEY = 'x'")
    directory = write_skill(skills_dir, "linked")
    os.symlink(outside, directory / "settings.py")
    assert checks() == [
        Warning(
            "Skill 'linked' (SKILL_DIRS): settings.py links outside the skill.",
            hint="It is not served: copy the file in instead.",
            obj=str(directory),
            id="mcp_django_skills.W131",
        )
    ]


def test_metadata_under_the_reserved_prefix_is_w132(skills_dir: Path) -> None:
    front_matter = "---\nname: meta\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n"
    directory = write_skill(skills_dir, "meta", front_matter)
    assert checks() == [
        Warning(
            "Skill 'meta' (SKILL_DIRS): metadata keys under a reserved prefix.",
            hint="io.modelcontextprotocol/ is for MCP extensions: use your own.",
            obj=str(directory),
            id="mcp_django_skills.W132",
        )
    ]


def test_every_message_of_a_skill_with_a_name_of_sixteen_characters_fits_in_80_characters(skills_dir: Path) -> None:
    name = "sixteen-chars-ab"
    write_skill(skills_dir / "a", name, f"---\nname: {name}\n---\n")
    write_skill(skills_dir / "b", name, "---\nname: other-sixteen-chars\ndescription: d\n---\n")
    write_skill(
        skills_dir / "c", name, f"---\nname: {name}\ndescription: d\nmetadata:\n  io.modelcontextprotocol/a: b\n---\n"
    )
    with with_settings(SKILL_DIRS=[str(skills_dir / part) for part in "abc"]):
        messages = checks()
    assert [message.id for message in messages] == [
        "mcp_django_skills.E132",
        "mcp_django_skills.E133",
        "mcp_django_skills.W132",
    ]
    assert max(len(message.msg) for message in messages) < 80


def test_a_skill_directory_linking_outside_the_skills_is_w133_and_not_served(
    skills_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = write_skill(tmp_path_factory.mktemp("elsewhere"), "borrowed", files={"secret.md": "s"})
    os.symlink(elsewhere, skills_dir / "borrowed")
    assert checks() == [
        Warning(
            "Skill 'borrowed' (SKILL_DIRS): its directory links outside SKILL_DIRS.",
            hint="It is not served: move the skill's directory in instead.",
            obj=str(skills_dir / "borrowed"),
            id="mcp_django_skills.W133",
        )
    ]
    assert catalogue().get("skill://borrowed/SKILL.md") is None


def test_a_skill_file_over_16_mib_is_w134_never_read_and_not_served(skills_dir: Path) -> None:
    directory = write_skill(skills_dir, "heavy", files={"small.md": "s"})
    with (directory / "big.bin").open("wb") as big:
        big.truncate(MAX_FILE_BYTES + 1)  # sparse: the size without the bytes
    assert checks() == [
        Warning(
            "Skill 'heavy' (SKILL_DIRS): big.bin is over 16 MiB.",
            hint="It is not served: split it.",
            obj=str(directory),
            id="mcp_django_skills.W134",
        )
    ]
    assert catalogue().file("skill://heavy/big.bin") is None
    assert catalogue().file("skill://heavy/small.md") is not None
