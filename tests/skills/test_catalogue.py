"""Finding skills: apps' `skills/` directories in INSTALLED_APPS order, SKILL_DIRS first, manifests hashed."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from django.conf import settings
from django.test import override_settings

from mcp_django.skills.catalogue import Catalogue, catalogue
from mcp_django.skills.frontmatter import parse_front_matter
from tests.skills.support import write_skill


def test_the_example_projects_skills_are_found_in_installed_apps_order() -> None:
    skills = catalogue().skills
    assert [(skill.name, skill.origin) for skill in skills] == [
        ("book-search", "demo"),
        ("catalogue-report", "demo"),
        ("fixture-tour", "conformance"),
    ]
    assert catalogue().problems == []


def test_a_manifest_lists_skill_md_first_then_every_file_with_the_digest_and_size_of_its_bytes(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {"templates/a.md": "A", "scripts/run.py": "print(1)\n", "logo.png": b"\x89PNG"}
    write_skill(tmp_path, "report", files=files)
    (skill,) = Catalogue([("tests", tmp_path)]).skills
    resources = skill.entry()["resources"]
    assert [resource["uri"] for resource in resources] == [
        "skill://report/SKILL.md",
        "skill://report/logo.png",
        "skill://report/scripts/run.py",
        "skill://report/templates/a.md",
    ]
    data = (tmp_path / "report" / "scripts" / "run.py").read_bytes()
    assert resources[2] == {
        "uri": "skill://report/scripts/run.py",
        "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }


def test_the_first_skill_of_a_name_wins_so_skills_dirs_override_an_apps_skill(tmp_path: Path) -> None:
    write_skill(tmp_path, "book-search", "---\nname: book-search\ndescription: The project's own.\n---\n")
    with override_settings(MCP_DJANGO={**settings.MCP_DJANGO, "SKILL_DIRS": [str(tmp_path)]}):
        found = {skill.name: skill for skill in catalogue().skills}
    assert found["book-search"].front_matter["description"] == "The project's own."
    assert found["book-search"].origin == "SKILL_DIRS"
    assert {skill.origin for skill in catalogue().skills} == {"demo", "conformance"}  # the override is gone again


def test_hidden_files_caches_and_directories_without_skill_md_are_not_skills_or_files(tmp_path: Path) -> None:
    files: dict[str, str | bytes] = {".secret": "x", "__pycache__/x.pyc": b"\0", ".git/config": "x", "notes.md": "n"}
    write_skill(tmp_path, "tidy", files=files)
    (tmp_path / "not-a-skill").mkdir()
    (tmp_path / "not-a-skill" / "README.md").write_text("no SKILL.md here")
    (skill,) = Catalogue([("tests", tmp_path)]).skills
    assert [file.relative for file in skill.files] == ["SKILL.md", "notes.md"]


def test_a_link_leading_outside_the_skill_is_not_served(tmp_path: Path) -> None:
    outside = tmp_path / "settings.py"
    outside.write_text("SECRET_KEY = 'x'")
    directory = write_skill(tmp_path / "skills", "linked", files={"inside.md": "ok"})
    os.symlink(outside, directory / "settings.py")
    os.symlink(tmp_path, directory / "project")
    found = Catalogue([("tests", tmp_path / "skills")])
    assert [file.relative for file in found.skills[0].files] == ["SKILL.md", "inside.md"]
    assert [problem.id for problem in found.problems] == ["mcp_django_skills.W131"]
    assert found.file("skill://linked/settings.py") is None


def test_front_matter_is_read_as_yaml_1_2_hosts_read_it() -> None:
    text = "---\nname: x\ndescription: d\non: yes\nwhen: 2026-01-01\ncount: 010\nhex: 0x1F\nratio: 1.5\nnone: ~\n---\n"
    assert parse_front_matter(text) == {
        "name": "x",
        "description": "d",
        "on": "yes",
        "when": "2026-01-01",
        "count": 10,
        "hex": 31,
        "ratio": 1.5,
        "none": None,
    }


def test_front_matter_after_a_byte_order_mark_and_with_crlf_lines_is_found() -> None:
    assert parse_front_matter("\ufeff---\r\nname: x\r\ndescription: d\r\n---\r\nbody") == {
        "name": "x",
        "description": "d",
    }
