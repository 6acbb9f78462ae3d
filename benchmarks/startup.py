"""What mcp_django adds to a management command: `manage.py check` with and without it (issue 34, item 3).

Builds a project as `django-admin startproject` writes it, in a temporary folder, in three variants:

- `bare`: the project as `startproject` wrote it;
- `drf`: plus an app of its own (one model served by a DRF viewset under `api/`) and Django REST
  framework with its token app: the project a team adding MCP typically already has;
- `mcp`: that project plus mcp_django as docs/quickstart.md adds it (the app, the URLs, the app's
  `mcp.py` with two tools).

and runs `python manage.py check` in each, rounds alternating between the variants, reporting per variant
the median wall time, the median CPU time (user + system, of the process and its children: what the
machine's other load does not inflate) and the median peak RSS. The target: `mcp` costs at most 25%
more wall time than `drf`.

    python benchmarks/startup.py              # 15 rounds
    python benchmarks/startup.py --rounds 31 --json
    python benchmarks/startup.py --before /tmp/main   # also `mcp, before`: the `mcp` project with the
                                                      # mcp_django package found in /tmp/main (PYTHONPATH)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

MODEL = """from django.db import models


class Book(models.Model):
    title = models.CharField(max_length=200)
    year = models.PositiveIntegerField()
"""

API = """from rest_framework import routers, serializers, viewsets

from .models import Book


class BookSerializer(serializers.ModelSerializer):
    class Meta:
        model = Book
        fields = ["id", "title", "year"]


class BookViewSet(viewsets.ModelViewSet):
    queryset = Book.objects.all()
    serializer_class = BookSerializer


router = routers.DefaultRouter()
router.register("books", BookViewSet)
"""

MCP_MODULE = '''import mcp_django

from .models import Book


@mcp_django.tool(annotations={"readOnlyHint": True})
def search_books(query: str = "", limit: int = 10) -> str:
    """Search the catalogue by title."""
    return "\\n".join(str(book) for book in Book.objects.filter(title__icontains=query)[:limit])


@mcp_django.tool
def count_books() -> int:
    """How many books the catalogue has."""
    return Book.objects.count()
'''

SETTINGS = {
    "bare": "",
    "drf": 'INSTALLED_APPS += ["rest_framework", "rest_framework.authtoken", "catalogue"]\n',
    "mcp": (
        'INSTALLED_APPS += ["rest_framework", "rest_framework.authtoken", "mcp_django", "catalogue"]\n'
        'MCP_DJANGO = {"SERVER_INFO": {"name": "catalogue", "version": "1.0"}}\n'
    ),
}


def make_project(where: Path, variant: str) -> Path:
    """A `startproject` project in `where/variant`, with the variant's settings, app and URLs."""
    folder = where / variant
    folder.mkdir()
    django_admin = Path(sys.executable).with_name("django-admin")
    subprocess.run([str(django_admin), "startproject", "mysite", str(folder)], check=True)
    settings = folder / "mysite" / "settings.py"
    settings.write_text(settings.read_text() + "\n" + SETTINGS[variant])
    if variant != "bare":
        app = folder / "catalogue"
        app.mkdir()
        (app / "__init__.py").write_text("")
        (app / "models.py").write_text(MODEL)
        (app / "api.py").write_text(API)
        routes = ['path("api/", include(router.urls))']
        if variant == "mcp":
            (app / "mcp.py").write_text(MCP_MODULE)
            routes.append('path("", include("mcp_django.urls"))')
        urls = folder / "mysite" / "urls.py"
        urls.write_text(
            urls.read_text()
            + "\nfrom django.urls import include\n\nfrom catalogue.api import router\n\n"
            + "".join(f"urlpatterns.append({route})\n" for route in routes)
        )
    return folder


def run_check(folder: Path, python_path: str | None = None) -> dict[str, float]:
    """One `manage.py check`: wall seconds, CPU seconds (user + system) and peak RSS in MB."""
    # Bytecode is written and read, as on a deployed site (an environment may switch writing off).
    env = {key: value for key, value in os.environ.items() if not key.startswith("DJANGO_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "check"], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if status != 0:
        raise SystemExit(
            f"manage.py check failed in {folder}: {process.stderr.read().decode() if process.stderr else ''}"
        )
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--before", metavar="FOLDER", help="a folder holding an earlier mcp_django package")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mcp-startup-") as temporary:
        projects = {variant: make_project(Path(temporary), variant) for variant in SETTINGS}
        paths = dict.fromkeys(projects, None)
        if options.before:
            projects["mcp, before"], paths["mcp, before"] = projects["mcp"], str(Path(options.before).resolve())
        for variant, folder in projects.items():
            run_check(folder, paths[variant])  # warm: bytecode compiled, files in the page cache
        samples: dict[str, list[dict[str, float]]] = {variant: [] for variant in projects}
        for round_number in range(options.rounds):
            order = list(projects) if round_number % 2 == 0 else list(reversed(projects))
            for variant in order:
                samples[variant].append(run_check(projects[variant], paths[variant]))
    report: dict[str, Any] = {
        variant: {key: statistics.median(sample[key] for sample in found) for key in ("wall", "cpu", "rss")}
        for variant, found in samples.items()
    }
    report["mcp_over_drf"] = {key: report["mcp"][key] / report["drf"][key] - 1 for key in ("wall", "cpu", "rss")}
    if options.before:
        before = report["mcp, before"]
        report["before_over_drf"] = {key: before[key] / report["drf"][key] - 1 for key in ("wall", "cpu", "rss")}
    report["load_average"] = os.getloadavg()
    if options.json:
        print(json.dumps(report, indent=2))
        return
    print(f"manage.py check, median of {options.rounds} rounds")
    print(f"{'variant':<12} {'wall s':>8} {'CPU s':>8} {'RSS MB':>8}")
    for variant in projects:
        row = report[variant]
        print(f"{variant:<12} {row['wall']:>8.3f} {row['cpu']:>8.3f} {row['rss']:>8.1f}")
    for key, label in (("before_over_drf", "mcp, before"), ("mcp_over_drf", "mcp")):
        if key in report:
            over = report[key]
            print(f"{label} over drf: wall {over['wall']:+.0%}, CPU {over['cpu']:+.0%}, RSS {over['rss']:+.0%}")
    print("target: wall <= +25%; load average at the end: " + " ".join(f"{x:.2f}" for x in report["load_average"]))


if __name__ == "__main__":
    main()
