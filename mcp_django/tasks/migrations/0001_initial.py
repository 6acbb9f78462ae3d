"""The `MCPTask` model, taken over from the `mcp_django` app (its 0013 created the table).

State only: the table `mcp_django_mcptask` is the one `mcp_django.0013_mcp_task` created, rows and all.
The content type moves with the model, so permissions granted on tasks stay granted.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


def move_content_type(apps, schema_editor):
    """Relabel the content type of `mcp_django.mcptask` (and so its permissions) as this app's."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    database = schema_editor.connection.alias
    if ContentType.objects.using(database).filter(app_label="mcp_django_tasks", model="mcptask").exists():
        return
    ContentType.objects.using(database).filter(app_label="mcp_django", model="mcptask").update(
        app_label="mcp_django_tasks"
    )


def restore_content_type(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    database = schema_editor.connection.alias
    if ContentType.objects.using(database).filter(app_label="mcp_django", model="mcptask").exists():
        return
    ContentType.objects.using(database).filter(app_label="mcp_django_tasks", model="mcptask").update(
        app_label="mcp_django"
    )


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("mcp_django", "0013_mcp_task"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="MCPTask",
                    fields=[
                        (
                            "task_id",
                            models.CharField(max_length=64, primary_key=True, serialize=False, verbose_name="task id"),
                        ),
                        (
                            "endpoint",
                            models.CharField(
                                db_index=True, help_text="The endpoint the task was started on.", max_length=100
                            ),
                        ),
                        ("tool", models.CharField(db_index=True, max_length=128)),
                        ("arguments", models.JSONField(blank=True, default=dict)),
                        ("protocol_version", models.CharField(max_length=32)),
                        ("client_capabilities", models.JSONField(blank=True, default=dict)),
                        ("client_info", models.JSONField(blank=True, null=True)),
                        (
                            "status",
                            models.CharField(
                                choices=[
                                    ("working", "working"),
                                    ("input_required", "input required"),
                                    ("completed", "completed"),
                                    ("failed", "failed"),
                                    ("cancelled", "cancelled"),
                                ],
                                db_index=True,
                                default="working",
                                max_length=16,
                            ),
                        ),
                        ("status_message", models.TextField(blank=True)),
                        ("progress", models.FloatField(blank=True, null=True)),
                        ("progress_total", models.FloatField(blank=True, null=True)),
                        (
                            "input_requests",
                            models.JSONField(
                                blank=True, default=dict, help_text="The input requests the task waits for, by key."
                            ),
                        ),
                        (
                            "answers",
                            models.JSONField(blank=True, default=dict, help_text="The client's answers so far, by key."),
                        ),
                        (
                            "result",
                            models.JSONField(
                                blank=True, help_text="The tool's CallToolResult once completed.", null=True
                            ),
                        ),
                        (
                            "error",
                            models.JSONField(blank=True, help_text="The JSON-RPC error once failed.", null=True),
                        ),
                        ("ttl_ms", models.PositiveBigIntegerField(blank=True, null=True)),
                        ("poll_interval_ms", models.PositiveIntegerField(blank=True, null=True)),
                        (
                            "backend_task_id",
                            models.CharField(
                                blank=True,
                                help_text="The id Django's task framework gave the job that runs it.",
                                max_length=64,
                            ),
                        ),
                        ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ("updated_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "user",
                            models.ForeignKey(
                                blank=True,
                                help_text="Who started the task; only they can see it. Empty for anonymous clients.",
                                null=True,
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="mcp_tasks",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "MCP task",
                        "verbose_name_plural": "MCP tasks",
                        "db_table": "mcp_django_mcptask",
                        "ordering": ["-created_at"],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_type, restore_content_type),
    ]
