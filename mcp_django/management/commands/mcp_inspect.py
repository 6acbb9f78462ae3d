"""``manage.py mcp_inspect``: what each endpoint serves to a user or a scope, and a tool call or a read from the shell.

::

    python manage.py mcp_inspect                                   # everything, with what each item needs
    python manage.py mcp_inspect --user alice                      # every endpoint, as alice
    python manage.py mcp_inspect --endpoint adapter --scope TEAM --json
    python manage.py mcp_inspect --endpoint server --user alice --call search_books --arguments '{"query": "dune"}'
    python manage.py mcp_inspect --endpoint server --user alice --read demo://books

docs/inspect.md.
"""

from __future__ import annotations

import json
from typing import Any

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_django.endpoints import Endpoint, get_endpoint, mounted_endpoints
from mcp_django.inspection import KINDS, inspect_endpoint
from mcp_django.management.commands.mcp_stdio import Command as StdioCommand
from mcp_django.scopes import Scope, User
from mcp_django.testing import MCPCallError, MCPTestClient

HEADINGS = {
    "tools": "Tools",
    "resources": "Resources",
    "resource_templates": "Resource templates",
    "prompts": "Prompts",
}


class Command(BaseCommand):
    help = (
        "List the endpoints and everything each defines, or what each serves to a user (--user) or a scope "
        "(--scope): tools, resources, templates and prompts with the scopes and permissions they need, their "
        "sources and on/off state; or call a tool (--call) or read a resource (--read) on one endpoint."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--endpoint", help="Only this endpoint (its name or path); needed for --call and --read.")
        parser.add_argument(
            "--user",
            help="The username to inspect as (its scope comes from your scope policy, its permissions from Django); "
            "without --user and --scope, everything is listed with what it needs.",
        )
        parser.add_argument("--scope", help="The scope to inspect as (USER, TEAM, SYSTEM); wins over --user's.")
        parser.add_argument("--call", metavar="TOOL", help="Call this tool and print its result.")
        parser.add_argument("--arguments", default="{}", help="The tool's arguments, a JSON object (with --call).")
        parser.add_argument("--read", metavar="URI", help="Read this resource and print its contents.")
        parser.add_argument("--json", action="store_true", help="Print JSON instead of text.")

    def handle(self, *args: Any, **options: Any) -> None:
        endpoints = self.endpoints(options["endpoint"])
        scope = self.scope(options["scope"])
        if options["call"] or options["read"]:
            if options["endpoint"] is None:
                raise CommandError("Name the endpoint to call or read on with --endpoint.")
            endpoint = endpoints[0]
            user = self.user(options["user"], endpoint, scope)
            result = async_to_sync(self.run)(endpoint, user, scope, options)
            self.stdout.write(json.dumps(result, indent=2, ensure_ascii=False, default=str))
            if result.get("isError"):
                raise CommandError("The tool answered with an error (isError).")
            return
        reports = []
        everything = options["user"] is None and scope is None
        for endpoint in endpoints:
            user = None if everything else self.user(options["user"], endpoint, scope=Scope.SYSTEM)  # no admission
            try:
                report = async_to_sync(inspect_endpoint)(endpoint, user=user, scope=scope, everything=everything)
                reports.append(report)
            except Exception as error:  # one endpoint failing to list (a remote it needs is down) spoils no other
                path = "/" + endpoint.path.strip("/")
                reports.append({"endpoint": endpoint.name, "path": path, "mode": endpoint.mode, "error": str(error)})
        if options["json"]:
            self.stdout.write(json.dumps({"endpoints": reports}, indent=2, ensure_ascii=False))
        else:
            for report in reports:
                self.write_report(report)

    @staticmethod
    def endpoints(name: str | None) -> list[Endpoint]:
        if name is None:
            return mounted_endpoints()
        try:
            return [get_endpoint(name)]
        except LookupError:
            known = ", ".join(endpoint.name for endpoint in mounted_endpoints())
            raise CommandError(f"No endpoint is mounted as {name!r}; the endpoints are: {known}.") from None

    @staticmethod
    def scope(value: str | None) -> Scope | None:
        try:
            return None if value is None else Scope.parse(value)
        except ValueError as error:
            raise CommandError(str(error)) from None

    @staticmethod
    def user(username: str | None, endpoint: Endpoint, scope: Scope | None) -> User | None:
        """The named user; no user is an anonymous caller, which needs a scope or an endpoint that admits one."""
        if username is None and scope is not None:
            return None
        user: User | None = StdioCommand.principal(username, endpoint)
        return user

    @staticmethod
    async def run(endpoint: Endpoint, user: User | None, scope: Scope | None, options: dict[str, Any]) -> Any:
        client = MCPTestClient(endpoint, user=user, scope=scope, era="stateless")
        try:
            if options["read"]:
                return await client.read_resource(options["read"])
            try:
                arguments = json.loads(options["arguments"])
            except json.JSONDecodeError as error:
                raise CommandError(f"--arguments is not JSON: {error}") from None
            if not isinstance(arguments, dict):
                raise CommandError("--arguments must be a JSON object.")
            return await client.call_tool(options["call"], arguments)
        except MCPCallError as error:
            raise CommandError(f"The endpoint refused: {error.message} (JSON-RPC error {error.code})") from None

    def write_report(self, report: dict[str, Any]) -> None:
        self.stdout.write(self.style.MIGRATE_HEADING(f"{report['endpoint']} ({report['mode']}) at {report['path']}"))
        if "error" in report:
            self.stdout.write(f"  could not be listed: {report['error']}")
            return
        caller = report["caller"]
        if caller is None:
            self.stdout.write("  everything it defines (--user or --scope shows what one caller is served)")
        else:
            who = caller["user"] or "an anonymous caller"
            self.stdout.write(f"  as {who}, scope {caller['scope'] or 'nothing (no scope)'}")
        for kind, *_ in KINDS:
            items = report[kind]
            if not items:
                continue
            if caller is None:
                self.stdout.write(f"  {HEADINGS[kind]} ({len(items)})")
            else:
                served = sum(bool(item["served"]) for item in items)
                self.stdout.write(f"  {HEADINGS[kind]} ({served} of {len(items)} served)")
            for item in items:
                mark = " " if item["served"] is None else "+" if item["served"] else "-"
                needs = f", needs {' and '.join(item['permissions'])}" if item["permissions"] else ""
                state = "" if item["state"] == "on" else f"  [{item['state']}]"
                where = f"scope {item['scope']}{needs}, {item['source']}"
                self.stdout.write(f"    {mark} {item['name']}  {where}{state}")
