"""``manage.py seed_demo``: the demo superuser and a few books, created once, safe to run again."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from example_project.demo.models import Book

BOOKS = [
    ("Dune", "Frank Herbert", 1965, "A desert planet, a spice, and a prophecy."),
    ("The Left Hand of Darkness", "Ursula K. Le Guin", 1969, "An envoy on a world without fixed sexes."),
    ("Neuromancer", "William Gibson", 1984, "A washed-up hacker hired for one last job."),
    ("The Dispossessed", "Ursula K. Le Guin", 1974, "A physicist between an anarchist moon and its planet."),
    ("Foundation", "Isaac Asimov", 1951, "A mathematician foresees the fall of an empire."),
    ("Hyperion", "Dan Simmons", 1989, "Seven pilgrims tell their tales on the way to the Shrike."),
]

ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "admin"  # a local demo account, printed on purpose


class Command(BaseCommand):
    help = "Create the demo superuser (admin/admin) and the demo books."

    def handle(self, *args: Any, **options: Any) -> None:
        user_model = get_user_model()
        if not user_model.objects.filter(username=ADMIN_USERNAME).exists():
            user_model.objects.create_superuser(ADMIN_USERNAME, "admin@example.com", ADMIN_PASSWORD)
            self.stdout.write(f"Created superuser {ADMIN_USERNAME!r} with password {ADMIN_PASSWORD!r}.")
        else:
            self.stdout.write(f"Superuser {ADMIN_USERNAME!r} exists (password {ADMIN_PASSWORD!r} unless changed).")

        created = 0
        for title, author, year, summary in BOOKS:
            _, was_created = Book.objects.get_or_create(
                title=title, defaults={"author": author, "year": year, "summary": summary}
            )
            created += was_created
        self.stdout.write(f"{created} demo books created, {Book.objects.count()} in the catalogue.")
