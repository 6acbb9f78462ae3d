"""Machine clients (`MachineClient`) and the accepted client assertions (`ClientAssertion`)."""

import django.db.models.deletion
from django.db import migrations, models
from oauth2_provider.settings import oauth2_settings


class Migration(migrations.Migration):
    initial = True

    dependencies = [migrations.swappable_dependency(oauth2_settings.APPLICATION_MODEL)]

    operations = [
        migrations.CreateModel(
            name="MachineClient",
            fields=[
                (
                    "application",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="machine_client",
                        serialize=False,
                        to=oauth2_settings.APPLICATION_MODEL,
                    ),
                ),
                (
                    "auth_method",
                    models.CharField(
                        choices=[
                            ("client_secret_basic", "client_secret_basic"),
                            ("private_key_jwt", "private_key_jwt (RFC 7523)"),
                        ],
                        default="client_secret_basic",
                        max_length=32,
                    ),
                ),
                (
                    "jwks",
                    models.JSONField(
                        blank=True, help_text="The client's public keys (a JWKS), for private_key_jwt.", null=True
                    ),
                ),
                (
                    "jwks_uri",
                    models.URLField(
                        blank=True,
                        help_text="Or the https URL of its JWKS, fetched at each token request.",
                        max_length=2000,
                    ),
                ),
            ],
            options={"verbose_name": "machine client"},
        ),
        migrations.CreateModel(
            name="ClientAssertion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("jti", models.CharField(max_length=255)),
                ("expires", models.DateTimeField(db_index=True)),
                (
                    "application",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, to=oauth2_settings.APPLICATION_MODEL
                    ),
                ),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("application", "jti"), name="mcp_oauth_assertion_once")
                ]
            },
        ),
    ]
