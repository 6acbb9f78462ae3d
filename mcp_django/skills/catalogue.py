"""Skills found on disk: `<app>/skills/<name>/SKILL.md` in `INSTALLED_APPS` order, like templates.

The catalogue is read once per process, on first use (and again when `MCP_DJANGO` changes): every
directory of `MCP_DJANGO["SKILL_DIRS"]`, then every installed app's `skills/` directory, in order;
the first skill of a name wins, as the first template of a name does. Each skill's files are hashed
then, so a listing can carry the digest and size of every file (SEP-2640's manifest). A skill whose
`SKILL.md` is unusable (no front matter, a name that is not its directory's) is left out, and the
problem is kept for the system checks (`mcp_django_skills.E130`...), so start-up reports it.

A file changed on disk after that is noticed when it is read: the read bytes no longer match the
manifest, and the skill is read again, so the next `skills/get` gives hosts the new digests.
"""

from __future__ import annotations

import dataclasses
import hashlib
import mimetypes
import os
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any, Final

from mcp_django.conf import mcp_settings
from mcp_django.skills.conf import skills_settings
from mcp_django.skills.frontmatter import FrontMatterError, parse_front_matter

SKILL_FILE: Final = "SKILL.md"
SCHEME: Final = "skill://"
MAX_FILES: Final = 512
"""SEP-2640's limit of resources per skill, `SKILL.md` included."""
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024
"""SEP-2640's limit of the total size of a skill's files."""
MAX_FILE_BYTES: Final = MAX_TOTAL_BYTES
"""The largest file of a skill that is served: a larger one is never read (each read holds it in memory)."""
NAME_RULE: Final = re.compile(r"^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$")
"""The Agent Skills naming rules: 1-64 lowercase letters, digits and hyphens, no hyphen at either end or twice."""
RESERVED_METADATA_PREFIX: Final = "io.modelcontextprotocol/"
DIRECTORY_MIME_TYPE: Final = "inode/directory"
_SKIPPED: Final = frozenset({"__pycache__"})
_TEXT_TYPES: Final = frozenset({"application/json", "application/xml", "application/javascript", "application/yaml"})
_EXTRA_TYPES: Final = {".md": "text/markdown", ".yaml": "application/yaml", ".yml": "application/yaml"}


@dataclasses.dataclass(frozen=True)
class Problem:
    """A skill that cannot be served as it is: the check ID, the message, the hint and what it is about."""

    id: str
    message: str
    hint: str
    obj: str


@dataclasses.dataclass(frozen=True)
class SkillFile:
    """One file of a skill: where it is, its URI, and the digest and size of its bytes."""

    path: Path
    relative: str
    uri: str
    digest: str
    size: int
    mime_type: str

    def entry(self) -> dict[str, Any]:
        """The `SkillResource` of the file, as a skill entry lists it."""
        return {"uri": self.uri, "digest": self.digest, "size": self.size}

    def resource(self) -> dict[str, Any]:
        """The file's `Resource` metadata (a directory read lists it so)."""
        name = PurePosixPath(self.relative).name
        return {"uri": self.uri, "name": name, "mimeType": self.mime_type, "size": self.size}


@dataclasses.dataclass(frozen=True)
class Skill:
    """One skill: its name, where it came from, its front matter and its files (`SKILL.md` first)."""

    name: str
    origin: str
    directory: Path
    front_matter: Mapping[str, Any]
    files: tuple[SkillFile, ...]

    @property
    def uri(self) -> str:
        """The URI of the skill's `SKILL.md`: `skill://<name>/SKILL.md`."""
        return f"{self.root}/{SKILL_FILE}"

    @property
    def root(self) -> str:
        """The URI of the skill's directory, without a trailing slash."""
        return f"{SCHEME}{self.name}"

    def entry(self) -> dict[str, Any]:
        """The skill's `Skill` entry, as `skills/list` and `skills/get` return it."""
        return {
            "uri": self.uri,
            "frontmatter": dict(self.front_matter),
            "resources": [file.entry() for file in self.files],
        }

    def resource(self) -> dict[str, Any]:
        """The `Resource` of the skill's `SKILL.md`, named and described from its front matter."""
        manifest = self.files[0]
        return {
            "uri": self.uri,
            "name": self.name,
            "description": str(self.front_matter["description"]),
            "mimeType": manifest.mime_type,
            "size": manifest.size,
        }

    def directories(self) -> dict[str, list[dict[str, Any]]]:
        """Every directory of the skill (its root included), by URI, with the `Resource`s of its direct children."""
        children: dict[str, dict[str, dict[str, Any]]] = {self.root: {}}
        for file in self.files:
            parts = PurePosixPath(file.relative).parts
            parent = self.root
            for part in parts[:-1]:
                here = f"{parent}/{part}"
                children.setdefault(here, {})
                children[parent].setdefault(here, {"uri": here, "name": part, "mimeType": DIRECTORY_MIME_TYPE})
                parent = here
            children[parent][file.uri] = file.resource()
        return {uri: list(listed.values()) for uri, listed in children.items()}


def digest_of(data: bytes) -> str:
    """SEP-2640's digest of a file's bytes: `sha256:` and 64 lowercase hexadecimal digits."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def mime_type_of(path: Path, data: bytes) -> str:
    """The file's MIME type from its name; text/plain for other UTF-8 text, else application/octet-stream."""
    guessed = _EXTRA_TYPES.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    if guessed is not None:
        return guessed
    return "text/plain" if is_utf8(data) else "application/octet-stream"


def is_text(mime_type: str, data: bytes) -> bool:
    """Whether the file goes on the wire as `text` (else as a base64 `blob`): textual and valid UTF-8."""
    textual = mime_type.startswith("text/") or mime_type in _TEXT_TYPES or mime_type.endswith(("+json", "+xml"))
    return textual and is_utf8(data)


def is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class Catalogue:
    """The skills of a set of directories, read once: the first skill of a name wins.

    Args:
        roots: `(origin, directory)` pairs in order of precedence; each directory holds one
            subdirectory per skill. `origin` names it in check messages (an app label, `SKILL_DIRS`).
    """

    def __init__(self, roots: Iterable[tuple[str, Path]]) -> None:
        self.roots = tuple(roots)
        self.problems: list[Problem] = []
        self._lock = threading.Lock()
        self._skills: dict[str, Skill] = {}
        self._files: dict[str, tuple[Skill, SkillFile]] = {}
        self._directories: dict[str, tuple[Skill, list[dict[str, Any]]]] = {}
        for origin, root in self.roots:
            for directory in _skill_directories(root):
                if _links_outside(root, directory):
                    label = f"Skill {_cut(directory.name, 16)!r} ({_cut(origin, 12)})"
                    message = f"{label}: its directory links outside {_cut(origin, 12)}."
                    hint = "It is not served: move the skill's directory in instead."
                    self.problems.append(Problem("mcp_django_skills.W133", message, hint, str(directory)))
                elif directory.name not in self._skills:
                    skill = self._load(origin, directory)
                    if skill is not None:
                        self._add(skill)

    @property
    def skills(self) -> tuple[Skill, ...]:
        """Every servable skill, in order of discovery."""
        return tuple(self._skills.values())

    def get(self, uri: str) -> Skill | None:
        """The skill whose `SKILL.md` is at `uri`, or None."""
        found = self._files.get(uri)
        return found[0] if found is not None and found[1] is found[0].files[0] else None

    def file(self, uri: str) -> tuple[Skill, SkillFile] | None:
        """The skill file at `uri` and its skill, or None: only files of the manifest are ever served."""
        return self._files.get(uri)

    def directory(self, uri: str) -> tuple[Skill, list[dict[str, Any]]] | None:
        """The skill holding the directory at `uri` and the `Resource`s of its direct children, or None."""
        return self._directories.get(uri)

    def reread(self, skill: Skill) -> Skill | None:
        """Read `skill` from disk again (a file changed); the new skill, or None when it is no longer servable."""
        with self._lock:
            problems: list[Problem] = []
            fresh = self._load(skill.origin, skill.directory, problems)
            for file in self._skills[skill.name].files if skill.name in self._skills else ():
                self._files.pop(file.uri, None)
            for uri in [uri for uri in self._directories if uri == skill.root or uri.startswith(skill.root + "/")]:
                del self._directories[uri]
            # In place: a skill read again keeps its position in the listing.
            self._skills = {
                name: known if name != skill.name or fresh is None else fresh
                for name, known in self._skills.items()
                if name != skill.name or fresh is not None
            }
            if fresh is not None:
                self._add(fresh)
            return fresh

    def _add(self, skill: Skill) -> None:
        self._skills[skill.name] = skill
        self._files.update((file.uri, (skill, file)) for file in skill.files)
        self._directories.update((uri, (skill, children)) for uri, children in skill.directories().items())

    def _load(self, origin: str, directory: Path, problems: list[Problem] | None = None) -> Skill | None:
        found = self.problems if problems is None else problems
        label = f"Skill {_cut(directory.name, 16)!r} ({_cut(origin, 12)})"
        obj = str(directory)
        files, trouble = _files_of(directory, label, obj)
        found += trouble
        manifest = next((file for file in files if file.relative == SKILL_FILE), None)
        if manifest is None:
            return None  # unreadable: reported by _files_of
        try:
            text = manifest.path.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as error:
            found.append(Problem("mcp_django_skills.E135", f"{label}: SKILL.md cannot be read.", _reason(error), obj))
            return None
        try:
            front_matter = parse_front_matter(text)
        except FrontMatterError as error:
            if str(error) == "no front matter":
                hint = "Begin SKILL.md with a --- line, the YAML, and another --- line."
                found.append(
                    Problem("mcp_django_skills.E130", f"{label}: SKILL.md has no YAML front matter.", hint, obj)
                )
            else:
                message = f"{label}: front matter is not a YAML mapping."
                found.append(Problem("mcp_django_skills.E131", message, f"Fix it: {_cut(str(error), 60)}.", obj))
            return None
        problem = _front_matter_problem(front_matter, directory.name, label, obj)
        if problem is not None:
            found.append(problem)
            return None
        found += _warnings(front_matter, files, label, obj)
        ordered = (manifest, *sorted((file for file in files if file is not manifest), key=lambda file: file.relative))
        return Skill(directory.name, origin, directory, front_matter, ordered)


def _skill_directories(root: Path) -> Iterator[Path]:
    try:
        children = sorted(root.iterdir())
    except OSError:
        return
    for child in children:
        if child.is_dir() and not child.name.startswith(".") and (child / SKILL_FILE).is_file():
            yield child


def _links_outside(root: Path, directory: Path) -> bool:
    """Whether a skill's directory is a link, or leads outside the directory of skills it was found in."""
    return directory.is_symlink() or not directory.resolve().is_relative_to(root.resolve())


def _files_of(directory: Path, label: str, obj: str) -> tuple[list[SkillFile], list[Problem]]:
    """The files of a skill, hashed, and the problems met (unreadable files, links leading outside)."""
    files: list[SkillFile] = []
    problems: list[Problem] = []
    root = directory.resolve()
    name = directory.name
    for current, subdirectories, filenames in os.walk(directory):
        subdirectories[:] = sorted(d for d in subdirectories if not d.startswith(".") and d not in _SKIPPED)
        for filename in sorted(f for f in filenames if not f.startswith(".")):
            path = Path(current) / filename
            relative = path.relative_to(directory).as_posix()
            if not path.resolve().is_relative_to(root) or any(p.is_symlink() for p in _between(directory, path)):
                message = f"{label}: {_cut(relative, 12)} links outside the skill."
                problems.append(
                    Problem("mcp_django_skills.W131", message, "It is not served: copy the file in instead.", obj)
                )
                continue
            try:
                too_large = path.stat().st_size > MAX_FILE_BYTES
                data = b"" if too_large else path.read_bytes()
            except OSError as error:
                message = f"{label}: {_cut(relative, 12)} cannot be read."
                problems.append(Problem("mcp_django_skills.E135", message, _reason(error), obj))
                continue
            if too_large:
                message = f"{label}: {_cut(relative, 12)} is over 16 MiB."
                problems.append(Problem("mcp_django_skills.W134", message, "It is not served: split it.", obj))
                continue
            uri = f"{SCHEME}{name}/{relative}"
            files.append(SkillFile(path, relative, uri, digest_of(data), len(data), mime_type_of(path, data)))
    return files, problems


def _between(directory: Path, path: Path) -> Iterator[Path]:
    """The directories below `directory` on the way to `path`: a linked one leads outside as a linked file does."""
    here = directory
    for part in path.relative_to(directory).parts[:-1]:
        here = here / part
        yield here


def _front_matter_problem(front_matter: Mapping[str, Any], directory: str, label: str, obj: str) -> Problem | None:
    for field in ("name", "description"):
        value = front_matter.get(field)
        if not isinstance(value, str) or not value.strip():
            hint = f"Add {field}: to the front matter of SKILL.md."
            return Problem("mcp_django_skills.E132", f"{label}: front matter has no {field}.", hint, obj)
    name = front_matter["name"]
    if name != directory:
        hint = f"It is {_cut(name, 20)!r}: set name: {directory}, or rename the directory."
        return Problem("mcp_django_skills.E133", f"{label}: name is not the directory's.", hint, obj)
    if not NAME_RULE.fullmatch(name):
        message = f"{label}: name breaks the naming rules."
        hint = "Use 1-64 lowercase letters, digits and single inner hyphens."
        return Problem("mcp_django_skills.E134", message, hint, obj)
    return None


def _warnings(front_matter: Mapping[str, Any], files: list[SkillFile], label: str, obj: str) -> list[Problem]:
    warnings = []
    if len(files) > MAX_FILES or sum(file.size for file in files) > MAX_TOTAL_BYTES:
        message = f"{label}: over the limit of 512 files or 16 MiB."
        warnings.append(
            Problem("mcp_django_skills.W130", message, "Hosts may refuse it: split it into smaller skills.", obj)
        )
    metadata = front_matter.get("metadata")
    if isinstance(metadata, Mapping) and any(str(key).startswith(RESERVED_METADATA_PREFIX) for key in metadata):
        message = f"{label}: metadata keys under a reserved prefix."
        warnings.append(
            Problem(
                "mcp_django_skills.W132", message, "io.modelcontextprotocol/ is for MCP extensions: use your own.", obj
            )
        )
    return warnings


def _reason(error: BaseException) -> str:
    if isinstance(error, UnicodeDecodeError):
        return "It is not UTF-8 text: save it as UTF-8."
    return _cut(f"{type(error).__name__}: {getattr(error, 'strerror', None) or error}", 70) + "."


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def installed_roots() -> list[tuple[str, Path]]:
    """`MCP_DJANGO["SKILL_DIRS"]`, then each installed app's `skills/` directory, in `INSTALLED_APPS` order."""
    from django.apps import apps

    configured = skills_settings.SKILL_DIRS
    directories = configured if isinstance(configured, (list, tuple)) else ()  # else check E136 says so
    roots = [("SKILL_DIRS", Path(directory)) for directory in directories if isinstance(directory, (str, Path))]
    roots += [(app.label, Path(app.path) / "skills") for app in apps.get_app_configs()]
    return roots


_catalogue: Catalogue | None = None
_catalogue_lock = threading.Lock()


def catalogue() -> Catalogue:
    """The project's skills, read on first use (the app registry must be ready) and again after `MCP_DJANGO` changes."""
    global _catalogue
    with _catalogue_lock:
        if _catalogue is None:
            _catalogue = Catalogue(installed_roots())
        return _catalogue


def _forget() -> None:
    global _catalogue
    _catalogue = None


mcp_settings.on_reload(_forget)
