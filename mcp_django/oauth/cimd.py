"""The fetcher of client ID metadata documents (`OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]`) for MCP clients.

django-oauth-toolkit's `SafeMetadataFetcher` guards the fetch of a client's document against SSRF:
https only, the host resolved once and only to public addresses, the connection made to the address
checked, no redirects, a size cap. `MCPMetadataFetcher` keeps all of it (the same checks and the same
reading of the answer) and adds two things:

- **a deadline for the whole fetch.** The toolkit's timeout bounds each read of the socket, so a
  server sending a byte a second held the fetch (and one of the `CIMD_MAX_CONCURRENT_FETCHES` slots)
  as long as it liked. Here the connection is cut once `CIMD_FETCH_TIMEOUT_SECONDS` have passed since
  the fetch began, whatever it waits for: the connection, TLS, the headers or the body.
- **the rules of registration.** A document must describe a public MCP client, as a registration must
  (`mcp_django.oauth.clients`): redirect URIs on https or a loopback address, no secret, the
  authorization code grant, and the redirect rules of its `application_type` (SEP-837; inferred from
  the redirect URIs when the document has none). The type is stored in the client's `ClientMetadata`
  as a registration's is, once the toolkit has saved the `Application` (`store_application_type`).

Check `mcp_django_oauth.W072` says when `CIMD_METADATA_FETCHER` names a fetcher that is not this one (or a
subclass).
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from typing import Any

import urllib3
from django.db.models.signals import post_save
from oauth2_provider import cimd
from oauth2_provider.settings import oauth2_settings

from mcp_django.oauth.clients import metadata_problem

_fetched = threading.local()
"""`types`: the `application_type` of each document this thread fetched, until its `Application` is saved."""


class _Cutoff:
    """Shuts a connection's socket down after `seconds`: a read blocked on it returns at once."""

    def __init__(self, connection: Any, seconds: float) -> None:
        self.connection = connection
        self.sock: socket.socket | None = None
        """The connected socket, kept once the request is sent: the connection lets go of it when the
        answer says `Connection: close`, and the answer reads on from it."""
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        self.fired = True
        sock = self.connection.sock or self.sock
        if sock is not None:
            # The plain socket's shutdown, also for a TLS socket: its own would drop the TLS state under
            # the reading thread's feet. OSError: closed meanwhile.
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


class MCPMetadataFetcher(cimd.SafeMetadataFetcher):
    """The toolkit's SSRF-hardened fetcher, bounded in wall time, for documents of public MCP clients only."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        """Fetch and check the document at `client_id`: `(metadata, max_age_seconds)`.

        Raises:
            oauth2_provider.cimd.CIMDError: the URL, its addresses, the answer or the metadata are not
                acceptable, or the fetch took longer than `CIMD_FETCH_TIMEOUT_SECONDS`.
        """
        metadata, max_age = self.fetch_document(client_id)
        problem = metadata_problem(metadata)
        if problem is not None:
            raise cimd.CIMDError(f"client metadata not accepted: {problem}")
        if not hasattr(_fetched, "types"):
            _fetched.types = {}
        _fetched.types[client_id] = metadata["application_type"]  # filled in by metadata_problem
        return metadata, max_age

    def fetch_document(self, client_id: str) -> tuple[dict[str, Any], int]:
        """Fetch the JSON object at the https URL `client_id` within the limits above, with no client rules
        (a machine client's JWKS is fetched so): `(document, max_age_seconds)`.

        Raises:
            oauth2_provider.cimd.CIMDError: the URL, its addresses or the answer are not acceptable, or
                the fetch took longer than `CIMD_FETCH_TIMEOUT_SECONDS`.
        """
        # The toolkit's steps, with a connection of our own: the socket must be at hand to cut it.
        parsed = cimd._validate_client_id_url(client_id)
        port = parsed.port or 443
        addresses = cimd._resolve_and_validate(parsed.hostname, port)
        timeout = float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        deadline = time.monotonic() + timeout
        target = parsed.path + (f"?{parsed.query}" if parsed.query else "")
        headers = {"Host": parsed.netloc, "Accept": "application/json, application/*+json"}
        context = ssl.create_default_context()
        failure: BaseException | None = None
        for address in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            # Connected to the checked address; SNI, the certificate and Host name the real host.
            connection = urllib3.connection.HTTPSConnection(
                address, port, timeout=remaining, ssl_context=context, server_hostname=parsed.hostname
            )
            cutoff = _Cutoff(connection, remaining)
            try:
                connection.request("GET", target, headers=headers, preload_content=False)
                cutoff.sock = connection.sock
                response = connection.getresponse()
                try:
                    document: tuple[dict[str, Any], int] = self._read_document(response)
                finally:
                    response.close()
            except (urllib3.exceptions.HTTPError, http.client.HTTPException, OSError) as exc:
                failure = exc
                continue
            except cimd.CIMDError:
                if cutoff.fired:
                    failure = TimeoutError()
                    continue
                raise
            finally:
                cutoff.cancel()
                connection.close()
            if not cutoff.fired:
                return document
            failure = TimeoutError()
        if isinstance(failure, TimeoutError) or time.monotonic() >= deadline:
            raise cimd.CIMDError(f"client_id document not fetched within {timeout:g} s")
        raise cimd.CIMDError(f"could not fetch client_id document: {failure}")


def store_application_type(sender: Any, instance: Any, **kwargs: Any) -> None:
    """After the toolkit saved the `Application` of a document this thread fetched: its `application_type`
    into the client's `ClientMetadata` (a `post_save` receiver, connected by `connect_application_type`)."""
    application_type = getattr(_fetched, "types", {}).pop(instance.client_id, None)
    if application_type is None:
        return
    from mcp_django.oauth.models import ClientMetadata

    ClientMetadata.objects.update_or_create(application=instance, defaults={"application_type": application_type})


def connect_application_type() -> None:
    """Store the `application_type` of each client ID metadata document's client (`MCPOAuthConfig.ready`)."""
    from oauth2_provider.models import get_application_model

    post_save.connect(store_application_type, sender=get_application_model(), dispatch_uid="mcp_django.cimd.type")
