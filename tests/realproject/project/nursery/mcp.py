from mcp_django.toolsets import APIToolset

from .api import NoteViewSet


class NoteTools(APIToolset):
    view = NoteViewSet
    actions = ["list", "retrieve", "create"]


NoteTools.register()
