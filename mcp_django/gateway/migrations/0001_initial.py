"""The gateway's models, taken over from the `mcp_django` app (its 0009, 0015 and 0016 created the tables).

State only: the tables `mcp_django_interceptorserver`, `mcp_django_remoteserverstate` and
`mcp_django_upstreamcredential` are the ones the `mcp_django` app created, rows and all. The content
types move with the models, so permissions granted on them stay granted. 0002 merges the two rows a
remote server had (`RemoteServerState`, `InterceptorServer`) into one `RemoteServer`.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

MODELS = ("interceptorserver", "remoteserverstate", "upstreamcredential")


def _relabel(apps, schema_editor, old, new):
    ContentType = apps.get_model("contenttypes", "ContentType")
    types = ContentType.objects.using(schema_editor.connection.alias)
    for model in MODELS:
        if not types.filter(app_label=new, model=model).exists():
            types.filter(app_label=old, model=model).update(app_label=new)


def move_content_types(apps, schema_editor):
    """Relabel the content types of the three models (and so their permissions) as this app's."""
    _relabel(apps, schema_editor, "mcp_django", "mcp_django_gateway")


def restore_content_types(apps, schema_editor):
    _relabel(apps, schema_editor, "mcp_django_gateway", "mcp_django")


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("mcp_django", "0018_gateway_models_to_gateway_app"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="InterceptorServer",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.SlugField(max_length=100, unique=True)),
                        ("url", models.URLField(blank=True, max_length=500, verbose_name="URL")),
                        ("headers", models.JSONField(blank=True, null=True)),
                        ("enabled", models.BooleanField(default=True)),
                        ("fail_open", models.BooleanField(blank=True, null=True)),
                        ("timeout_ms", models.PositiveIntegerField(blank=True, null=True, verbose_name="timeout (ms)")),
                        ("updated", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "verbose_name": "MCP interceptor server",
                        "verbose_name_plural": "MCP interceptor servers",
                        "db_table": "mcp_django_interceptorserver",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="RemoteServerState",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("name", models.CharField(max_length=100, unique=True)),
                        ("enabled", models.BooleanField(default=True)),
                        (
                            "min_scope",
                            models.PositiveSmallIntegerField(
                                blank=True,
                                choices=[(0, "user"), (1, "team"), (2, "system")],
                                null=True,
                                verbose_name="minimum scope",
                            ),
                        ),
                        ("present_in_code", models.BooleanField(default=True, editable=False)),
                        ("updated", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "verbose_name": "MCP remote server state",
                        "verbose_name_plural": "MCP remote server states",
                        "db_table": "mcp_django_remoteserverstate",
                        "ordering": ["name"],
                    },
                ),
                migrations.CreateModel(
                    name="UpstreamCredential",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        (
                            "server",
                            models.CharField(
                                help_text="The name of the remote server in MCP_DJANGO['SERVERS'].", max_length=100
                            ),
                        ),
                        (
                            "issuer",
                            models.CharField(help_text="The authorization server that issued the tokens.", max_length=500),
                        ),
                        ("token_endpoint", models.CharField(editable=False, max_length=500)),
                        ("client_id", models.CharField(editable=False, max_length=500)),
                        ("scope", models.CharField(blank=True, default="", max_length=500)),
                        ("secret", models.TextField(editable=False, help_text="The encrypted tokens.")),
                        (
                            "expires_at",
                            models.DateTimeField(blank=True, help_text="When the access token expires.", null=True),
                        ),
                        ("created", models.DateTimeField(auto_now_add=True)),
                        ("updated", models.DateTimeField(auto_now=True)),
                        (
                            "user",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="mcp_upstream_credentials",
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                    ],
                    options={
                        "verbose_name": "MCP upstream connection",
                        "verbose_name_plural": "MCP upstream connections",
                        "db_table": "mcp_django_upstreamcredential",
                        "ordering": ["server", "user"],
                        "constraints": [
                            models.UniqueConstraint(fields=("user", "server"), name="mcp_upstream_one_per_user_server")
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(move_content_types, restore_content_types),
    ]
