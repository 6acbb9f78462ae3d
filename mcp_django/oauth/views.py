"""The authorization server's views, on top of django-oauth-toolkit's: registration, login and consent.

- `RegistrationView` (RFC 7591) registers public clients only (`token_endpoint_auth_method: none`,
  assumed when omitted), for the authorization code grant, with redirect URIs on `https` or a
  loopback address (`http://127.0.0.1:<port>/...`, `[::1]`, `localhost`), as MCP clients need.
  At most `OAUTH_REGISTRATION_RATE` registrations per calling address (`throttling.py`); past it, 429.
- `ConsentView` is the authorization endpoint: it asks a logged-in user to approve the client, for
  the MCP endpoint named by the `resource` parameter (required, RFC 8707: it must be an endpoint of
  this site that accepts these tokens) and for the requested scopes the user has (a token never
  exceeds its user's scope). PKCE with S256 only. Template: `mcp_django/oauth/authorize.html`.
- `LoginView` is where the authorization endpoint sends a user who is not logged in, unless the
  project sets its own `LOGIN_URL`. Template: `mcp_django/oauth/login.html`.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import AuthorizationView, DynamicClientRegistrationView

from mcp_django.endpoints import canonical_path, endpoint_registry
from mcp_django.oauth.authentication import accepts_oauth, resource_matches
from mcp_django.oauth.grants import granted_scopes
from mcp_django.oauth.throttling import LoginThrottle, RegistrationThrottle
from mcp_django.scopes import Scope, get_scope_policy

__all__ = ["ConsentView", "LoginView", "RegistrationView", "redirect_uri_allowed"]

LOOPBACK_NAMES = frozenset({"localhost"})
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})


def redirect_uri_allowed(uri: Any) -> bool:
    """True for an `https` URI, or an `http` one on a loopback address (a native client's local listener)."""
    if not isinstance(uri, str):
        return False
    try:
        parts = urlsplit(uri)
        parts.port  # noqa: B018  # a port out of range raises here
    except ValueError:
        return False
    if not parts.hostname or parts.fragment or parts.username is not None:
        return False
    if parts.scheme == "https":
        return True
    if parts.scheme != "http":
        return False
    if parts.hostname in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def _registration_error(description: str) -> JsonResponse:
    return JsonResponse({"error": "invalid_client_metadata", "error_description": description}, status=400)


class RegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration of a public MCP client; django-oauth-toolkit stores it as an `Application`."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = RegistrationThrottle()
        if not throttle.allow_request(request, self):
            retry_after = throttle.retry_after()
            busy = JsonResponse(
                {
                    "error": "temporarily_unavailable",
                    "error_description": f"Too many client registrations from this address; retry in {retry_after} s.",
                },
                status=429,
            )
            busy["Retry-After"] = str(retry_after)
            return busy
        try:
            data = json.loads(request.body)
        except ValueError:
            return _registration_error("Request body must be valid JSON")
        if not isinstance(data, dict):
            return _registration_error("Request body must be a JSON object")
        method = data.setdefault("token_endpoint_auth_method", "none")
        if method != "none":
            return _registration_error("Only public clients register here: token_endpoint_auth_method must be none")
        grant_types = data.setdefault("grant_types", ["authorization_code", "refresh_token"])
        if not isinstance(grant_types, list) or "authorization_code" not in grant_types:
            return _registration_error("grant_types must include authorization_code")
        if not set(map(str, grant_types)) <= GRANT_TYPES:
            return _registration_error("Only the authorization_code and refresh_token grants are supported")
        response_types = data.get("response_types", ["code"])
        if not isinstance(response_types, list) or not set(map(str, response_types)) <= {"code"}:
            return _registration_error("Only the code response type is supported")
        redirect_uris = data.get("redirect_uris")
        if not isinstance(redirect_uris, list) or not redirect_uris:
            return _registration_error("redirect_uris must be a non-empty array")
        refused = [uri for uri in redirect_uris if not redirect_uri_allowed(uri)]
        if refused:
            return _registration_error(f"Redirect URIs must use https or a loopback address: {refused[0]!r}")
        request._body = json.dumps(data).encode()  # what the toolkit's view reads: the defaults made explicit
        return super().post(request, *args, **kwargs)  # type: ignore[no-any-return]  # untyped library


class ConsentView(AuthorizationView):
    """The authorization endpoint: login, then the user's consent, for one MCP endpoint of this site."""

    template_name = "mcp_django/oauth/authorize.html"

    def get_login_url(self) -> str:
        if settings.is_overridden("LOGIN_URL"):  # type: ignore[misc]  # missing from django-stubs
            return str(settings.LOGIN_URL)
        return reverse("oauth2_provider:login")

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        problem = _request_problem(request.GET.get("code_challenge_method"), request.GET.getlist("resource"), request)
        if problem is not None:
            return self._refuse(*problem)
        if self._user_scope() is None:
            return self._refuse("access_denied", "Your account has no access to the MCP endpoints of this site.")
        prompt = request.GET.get("approval_prompt", oauth2_settings.REQUEST_APPROVAL_PROMPT)
        if prompt == "auto" and not _approved_before(request):
            # The toolkit's auto-approval looks at scopes alone: an approval for one endpoint
            # would hand out codes for every other endpoint of the site without asking.
            request.GET = request.GET.copy()
            request.GET["approval_prompt"] = "force"
        return super().get(request, *args, **kwargs)  # type: ignore[no-any-return]

    def get_initial(self) -> dict[str, Any]:
        initial: dict[str, Any] = super().get_initial()
        initial["scope"] = " ".join(granted_scopes(str(initial.get("scope") or "").split(), self._user_scope()))
        return initial

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        scopes = granted_scopes(context.get("scopes") or [], self._user_scope())
        descriptions = dict(zip(context.get("scopes") or [], context.get("scopes_descriptions") or [], strict=False))
        context["scopes"] = scopes
        context["scopes_descriptions"] = [descriptions.get(name, name) for name in scopes]
        context["resources"] = str(context.get("resource") or "").split()
        return context

    def form_valid(self, form: Any) -> HttpResponse:
        # The hidden fields come back from the browser: check them again.
        resources = str(form.cleaned_data.get("resource") or "").split()
        problem = _request_problem(form.cleaned_data.get("code_challenge_method"), resources, self.request)
        if problem is not None:
            return self._refuse(*problem)
        form.cleaned_data["scope"] = " ".join(
            granted_scopes(str(form.cleaned_data.get("scope") or "").split(), self._user_scope())
        )
        if not form.cleaned_data["scope"]:
            return self._refuse("access_denied", "Your account has no access to the MCP endpoints of this site.")
        return super().form_valid(form)  # type: ignore[no-any-return]

    def _user_scope(self) -> Scope | None:
        return get_scope_policy().scope_of(self.request.user)

    def _refuse(self, error: str, description: str) -> HttpResponse:
        context = {"error": {"error": error, "description": description}}
        return self.render_to_response(context, status=400)  # type: ignore[no-any-return]


def _request_problem(method: Any, resources: list[str], request: HttpRequest) -> tuple[str, str] | None:
    """`(error, description)` when an authorization request is not one this server grants, else None."""
    if method != "S256":
        return "invalid_request", "PKCE with code_challenge_method=S256 is required."
    if not resources:
        return "invalid_target", "Name the MCP endpoint the token is for in the resource parameter (RFC 8707)."
    for resource in resources:
        try:
            endpoint = endpoint_registry().at(canonical_path(urlsplit(resource).path))
        except ValueError:  # not a URI at all
            endpoint = None
        if (
            endpoint is None
            or endpoint.allow_anonymous
            or not accepts_oauth(endpoint)
            or not resource_matches([resource], endpoint, request.get_host())
        ):
            return "invalid_target", f"{resource} is not an MCP endpoint of this site that accepts OAuth tokens."
    return None


def _approved_before(request: HttpRequest) -> bool:
    """Whether the user holds a live token of this client for every requested resource and scope at once."""
    resources = set(request.GET.getlist("resource"))
    scopes = str(request.GET.get("scope") or "").split() or list(oauth2_settings.DEFAULT_SCOPES)
    tokens = get_access_token_model().objects.filter(
        user=request.user, application__client_id=request.GET.get("client_id"), expires__gt=timezone.now()
    )
    return any(
        isinstance(token.resource, list) and resources <= set(token.resource) and token.allow_scopes(scopes)
        for token in tokens
    )


class LoginView(auth_views.LoginView):
    """Django's login view, with the OAuth pages' template; past `OAUTH_LOGIN_RATE` failures, 429."""

    template_name = "mcp_django/oauth/login.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = LoginThrottle()
        if throttle.blocked(request):
            retry_after = throttle.retry_after()
            form = self.get_form_class()(request)  # unbound: the password sent is never tried
            response = self.render_to_response(self.get_context_data(form=form, retry_after=retry_after), status=429)
            response["Retry-After"] = str(retry_after)
            return response  # type: ignore[no-any-return]  # untyped TemplateResponse
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        LoginThrottle().failed(self.request)
        return super().form_invalid(form)
