"""One row per remote server: `RemoteServer` merges the two a server had, `RemoteServerState` (its tools,
resources and prompts: on or off, a minimum scope) and `InterceptorServer` (its interceptors: on or off, a
URL, headers, fail-open, a timeout).

Every row of both is copied, switches and all, into the server's one `RemoteServer` row (a name in only
one of them gets the other's defaults), then the two old tables go. Whoever held a permission on either
old model holds the same one on `RemoteServer` (the old content types are left stale, for
`manage.py remove_stale_contenttypes`). Reversible: the rows split back.
"""

from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db import migrations, models

LABEL = "mcp_django_gateway"
ACTIONS = ("add", "change", "delete", "view")
SOURCE_DEFAULTS = {"enabled": True, "min_scope": None}
INTERCEPTOR_DEFAULTS = {"interceptors_enabled": True, "url": "", "headers": None, "fail_open": None, "timeout_ms": None}


def merge_rows(apps, schema_editor):
    """Copy every `RemoteServerState` and `InterceptorServer` row into the one `RemoteServer` row of its name."""
    database = schema_editor.connection.alias
    RemoteServer = apps.get_model(LABEL, "RemoteServer")
    states = {row.name: row for row in apps.get_model(LABEL, "RemoteServerState").objects.using(database)}
    servers = {row.name: row for row in apps.get_model(LABEL, "InterceptorServer").objects.using(database)}
    for name in sorted(states.keys() | servers.keys()):
        state, server = states.get(name), servers.get(name)
        fields = {"name": name, "present_in_code": state.present_in_code if state else False}
        if state is not None:
            fields.update(enabled=state.enabled, min_scope=state.min_scope)
        if server is not None:
            fields.update(
                interceptors_enabled=server.enabled,
                url=server.url,
                headers=server.headers,
                fail_open=server.fail_open,
                timeout_ms=server.timeout_ms,
            )
        RemoteServer.objects.using(database).create(**fields)
        updated = max(row.updated for row in (state, server) if row is not None)
        RemoteServer.objects.using(database).filter(name=name).update(updated=updated)  # not the migration's time
    _grant_merged_permissions(apps, database)


def split_rows(apps, schema_editor):
    """Back to two rows: a `RemoteServerState` for a server of the settings or one switched here, an
    `InterceptorServer` for one whose interceptors were switched or amended here."""
    database = schema_editor.connection.alias
    RemoteServerState = apps.get_model(LABEL, "RemoteServerState")
    InterceptorServer = apps.get_model(LABEL, "InterceptorServer")
    for row in apps.get_model(LABEL, "RemoteServer").objects.using(database):
        if row.present_in_code or any(getattr(row, field) != value for field, value in SOURCE_DEFAULTS.items()):
            RemoteServerState.objects.using(database).create(
                name=row.name, enabled=row.enabled, min_scope=row.min_scope, present_in_code=row.present_in_code
            )
        if any(getattr(row, field) != value for field, value in INTERCEPTOR_DEFAULTS.items()):
            InterceptorServer.objects.using(database).create(
                name=row.name,
                url=row.url,
                headers=row.headers,
                enabled=row.interceptors_enabled,
                fail_open=row.fail_open,
                timeout_ms=row.timeout_ms,
            )


def _grant_merged_permissions(apps, database):
    """Whoever holds `<action>_remoteserverstate` or `<action>_interceptorserver` gets `<action>_remoteserver`."""
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    old_types = list(
        ContentType.objects.using(database).filter(app_label=LABEL, model__in=["remoteserverstate", "interceptorserver"])
    )
    if not old_types:  # a fresh database: post_migrate creates RemoteServer's permissions, nobody holds old ones
        return
    new_type, _ = ContentType.objects.using(database).get_or_create(app_label=LABEL, model="remoteserver")
    for action in ACTIONS:
        old = Permission.objects.using(database).filter(
            content_type__in=old_types, codename__in=[f"{action}_{type_.model}" for type_ in old_types]
        )
        if not old.exists():
            continue
        new, _ = Permission.objects.using(database).get_or_create(
            content_type=new_type, codename=f"{action}_remoteserver", defaults={"name": f"Can {action} MCP remote server"}
        )
        for through, holder in _holder_tables(apps):
            held = through.objects.using(database).filter(permission__in=old).values_list(holder, flat=True)
            through.objects.using(database).bulk_create(
                [through(**{holder: pk, "permission_id": new.pk}) for pk in set(held)], ignore_conflicts=True
            )


def _holder_tables(apps):
    """The many-to-many tables that grant permissions (groups', and the user model's if it has one), with the
    column naming the holder."""
    models_holding = [apps.get_model("auth", "Group"), apps.get_model(settings.AUTH_USER_MODEL)]
    found = []
    for model in models_holding:
        try:
            field = model._meta.get_field("permissions" if model._meta.label == "auth.Group" else "user_permissions")
        except FieldDoesNotExist:  # a user model without PermissionsMixin
            continue
        through = field.remote_field.through
        holder = next(f for f in through._meta.fields if f.is_relation and f.related_model is model)
        found.append((through, holder.attname))
    return found


class Migration(migrations.Migration):
    dependencies = [
        ("mcp_django_gateway", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="RemoteServer",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("enabled", models.BooleanField(default=True, help_text="Off: its tools, resources and prompts vanish from every gateway and hub.")),
                ("present_in_code", models.BooleanField(default=True, editable=False, help_text="False: MCP_DJANGO['SERVERS'] names it no more (a row with a URL still adds its interceptors).")),
                ("updated", models.DateTimeField(auto_now=True)),
                ("min_scope", models.PositiveSmallIntegerField(blank=True, choices=[(0, "user"), (1, "team"), (2, "system")], help_text="Callers below this scope see nothing of the server. Blank: each endpoint's own scope for it.", null=True, verbose_name="minimum scope")),
                ("name", models.SlugField(help_text="The server's name in SERVERS, or a new one.", max_length=100, unique=True)),
                ("interceptors_enabled", models.BooleanField(default=True, help_text="Off: its interceptors stop running.", verbose_name="interceptors enabled")),
                ("url", models.URLField(blank=True, help_text="Its Streamable HTTP endpoint. Blank: the settings' URL.", max_length=500, verbose_name="URL")),
                ("headers", models.JSONField(blank=True, help_text="HTTP headers sent to it, e.g. an Authorization. Blank: the settings'.", null=True)),
                ("fail_open", models.BooleanField(blank=True, help_text="On: an interceptor server that cannot be listed or called is skipped instead of refusing every call. Blank: as configured (default off).", null=True)),
                ("timeout_ms", models.PositiveIntegerField(blank=True, help_text="Bound on each interceptor call to it. Blank: as configured.", null=True, verbose_name="timeout (ms)")),
            ],
            options={
                "verbose_name": "MCP remote server",
                "verbose_name_plural": "MCP remote servers",
                "ordering": ["name"],
            },
        ),
        migrations.RunPython(merge_rows, split_rows),
        migrations.DeleteModel(name="InterceptorServer"),
        migrations.DeleteModel(name="RemoteServerState"),
    ]
