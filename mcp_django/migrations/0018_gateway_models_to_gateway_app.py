"""The gateway's models leave the `mcp_django` app for `mcp_django_gateway` (the gateway's own app).

State only: the tables (`mcp_django_interceptorserver`, `mcp_django_remoteserverstate`,
`mcp_django_upstreamcredential`) and their rows stay, and `mcp_django_gateway.0001_initial` takes the
models over under the same table names (its 0002 then merges a server's two rows into one). A project
without the gateway app keeps the tables as 0009, 0015 and 0016 created them.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("mcp_django", "0017_mcpsession_client_address"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="InterceptorServer"),
                migrations.DeleteModel(name="RemoteServerState"),
                migrations.DeleteModel(name="UpstreamCredential"),
            ],
            database_operations=[],
        ),
    ]
