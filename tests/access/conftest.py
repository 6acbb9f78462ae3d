"""Fixtures of the access tests: alice (USER), bob (TEAM through SCOPE_GROUPS), carol (SYSTEM through a GroupScope)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from mcp_django.models import GroupScope
from mcp_django.scopes import Scope
from tests.access_support import Caller, make_caller

pytestmark = pytest.mark.urls("tests.access_urls")


@pytest.fixture
def alice(db: None) -> Caller:
    """USER: no MCP group."""
    return make_caller("alice")


@pytest.fixture
def bob(db: None) -> Caller:
    """TEAM: in `mcp-team`, which `SCOPE_GROUPS` maps to TEAM (example_project.settings)."""
    return make_caller("bob", "mcp-team")


@pytest.fixture
def carol(db: None) -> Caller:
    """SYSTEM: in `mcp-system`, which a `GroupScope` row maps to SYSTEM."""
    caller = make_caller("carol", "mcp-system")
    GroupScope.objects.create(group=Group.objects.get(name="mcp-system"), scope=Scope.SYSTEM)
    return caller
