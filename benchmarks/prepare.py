"""Set up the benchmark database: migrate, then a user with the DRF token the token + audit rows send.

Run as ``python -m benchmarks.prepare`` with ``BENCH_DB`` pointing at the database file.
"""

from __future__ import annotations

import os


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "benchmarks.settings")
    import django

    django.setup()

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from benchmarks.workloads import TOKEN

    call_command("migrate", interactive=False, verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench")
    Token.objects.get_or_create(user=user, key=TOKEN)


if __name__ == "__main__":
    main()
