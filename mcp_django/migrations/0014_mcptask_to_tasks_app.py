"""`MCPTask` leaves the `mcp_django` app for `mcp_django_tasks` (the tasks extension's own app).

State only: the table (`mcp_django_mcptask`) and its rows stay, and `mcp_django_tasks.0001_initial`
takes the model over under the same table name. A project without the tasks app keeps the table,
empty, as 0013 created it.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("mcp_django", "0013_mcp_task"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="MCPTask")],
            database_operations=[],
        ),
    ]
