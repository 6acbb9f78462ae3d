"""The MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on Django's task framework.

A tool declared `task="optional"` or `task="required"` runs as a task for clients that declare the
extension: the web process stores an `MCPTask` row and enqueues `worker.run_mcp_task` on the backend
`MCP_DJANGO["TASK_BACKEND"]` names (`django_tasks_db`'s database backend by default, run by
`manage.py db_worker`); `tasks/get`, `tasks/update` and `tasks/cancel` answer from the row. See
docs/tasks.md.
"""
