"""`RemoteServer.timeout_ms` (milliseconds) becomes `timeout` (seconds), as every duration of the package is:
each row's value is carried over (300 ms -> 0.3 s), and back when migrating back (rounded to the millisecond)."""

from __future__ import annotations

from typing import Any

import django.core.validators
from django.db import migrations, models


def to_seconds(apps: Any, schema_editor: Any) -> None:
    servers = apps.get_model("mcp_django_gateway", "RemoteServer")
    for row in servers.objects.exclude(timeout_ms=None):
        row.timeout = row.timeout_ms / 1000
        row.save(update_fields=["timeout"])


def to_milliseconds(apps: Any, schema_editor: Any) -> None:
    servers = apps.get_model("mcp_django_gateway", "RemoteServer")
    for row in servers.objects.exclude(timeout=None):
        row.timeout_ms = max(1, round(row.timeout * 1000))
        row.save(update_fields=["timeout_ms"])


class Migration(migrations.Migration):
    dependencies = [("mcp_django_gateway", "0002_remoteserver")]

    operations = [
        migrations.AddField(
            model_name="remoteserver",
            name="timeout",
            field=models.FloatField(
                blank=True,
                help_text="Bound on each interceptor call to it, in seconds (like its TIMEOUT). Blank: as configured.",
                null=True,
                validators=[django.core.validators.MinValueValidator(0.001)],
                verbose_name="timeout (seconds)",
            ),
        ),
        migrations.RunPython(to_seconds, to_milliseconds),
        migrations.RemoveField(model_name="remoteserver", name="timeout_ms"),
    ]
