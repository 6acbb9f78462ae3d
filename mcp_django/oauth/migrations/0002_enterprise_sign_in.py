"""Enterprise sign-in (`LinkedIdentity`, `IdentityAssertion`, `MachineClient.identity_assertions`) and `ClientMetadata`."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models
from oauth2_provider.settings import oauth2_settings


class Migration(migrations.Migration):
    dependencies = [
        ("mcp_django_oauth", "0001_machine_clients"),
        migrations.swappable_dependency(oauth2_settings.APPLICATION_MODEL),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ClientMetadata",
            fields=[
                (
                    "application",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="mcp_metadata",
                        serialize=False,
                        to=oauth2_settings.APPLICATION_MODEL,
                    ),
                ),
                (
                    "application_type",
                    models.CharField(choices=[("native", "native"), ("web", "web")], default="native", max_length=16),
                ),
            ],
            options={
                "verbose_name": "client metadata",
                "verbose_name_plural": "client metadata",
            },
        ),
        migrations.AddField(
            model_name="machineclient",
            name="identity_assertions",
            field=models.BooleanField(
                default=False,
                help_text="May exchange identity assertions (ID-JAG) of trusted identity providers for tokens of the users they name (enterprise sign-in).",
            ),
        ),
        migrations.AlterField(
            model_name="machineclient",
            name="jwks_uri",
            field=models.URLField(
                blank=True,
                help_text="Or the https URL of its JWKS (cached as its Cache-Control allows).",
                max_length=2000,
            ),
        ),
        migrations.CreateModel(
            name="IdentityAssertion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("issuer", models.CharField(max_length=2000)),
                ("jti", models.CharField(max_length=255)),
                ("expires", models.DateTimeField(db_index=True)),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("issuer", "jti"), name="mcp_oauth_identity_assertion_once")
                ],
            },
        ),
        migrations.CreateModel(
            name="LinkedIdentity",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("issuer", models.CharField(max_length=2000)),
                ("subject", models.CharField(max_length=255)),
                ("created", models.DateTimeField(auto_now_add=True)),
                (
                    "user",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="linked_identities",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "verbose_name": "linked identity",
                "verbose_name_plural": "linked identities",
                "constraints": [models.UniqueConstraint(fields=("issuer", "subject"), name="mcp_oauth_identity_once")],
            },
        ),
    ]
