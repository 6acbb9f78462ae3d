"""The authorization server's views, on top of django-oauth-toolkit's: registration, login and consent.

- `RegistrationView` (RFC 7591) registers public clients only (`token_endpoint_auth_method: none`,
  assumed when omitted), for the authorization code grant, with redirect URIs on `https` or a
  loopback address (`http://127.0.0.1:<port>/...`, `[::1]`, `localhost`), as MCP clients need; the
  client's `application_type` (SEP-837) is stored beside it (`ClientMetadata`) and read back by
  `RegistrationManagementView` (RFC 7592).
  At most `OAUTH_REGISTRATION_RATE` registrations per calling address (`throttling.py`); past it, 429.
- `ConsentView` is the authorization endpoint: it asks a logged-in user to approve the client, for
  the MCP endpoint named by the `resource` parameter (required, RFC 8707: it must be an endpoint of
  this site that accepts these tokens) and for the requested scopes the user has (a token never
  exceeds its user's scope). PKCE with S256 only. Template: `mcp_django/oauth/authorize.html`.
- `RateLimitedTokenView` is the token endpoint: at most `OAUTH_TOKEN_RATE` requests per calling
  address and per client; past it, 429 with `Retry-After`, and the request is not looked at.
- `LoginView` is where the authorization endpoint sends a user who is not logged in, unless the
  project sets its own `LOGIN_URL`. Template: `mcp_django/oauth/login.html`.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils import timezone
from oauth2_provider.models import get_access_token_model, get_application_model
from oauth2_provider.settings import oauth2_settings
from oauth2_provider.views import (
    AuthorizationView,
    DynamicClientRegistrationManagementView,
    DynamicClientRegistrationView,
    OAuthServerMetadataView,
    TokenView,
)

from mcp_django.oauth.authentication import target_problem
from mcp_django.oauth.clients import MetadataProblem, client_metadata
from mcp_django.oauth.enterprise import JWT_BEARER
from mcp_django.oauth.grants import granted_scopes
from mcp_django.oauth.machines import SIGNING_ALGORITHMS
from mcp_django.oauth.models import ClientMetadata
from mcp_django.oauth.server import takes_identity_assertions
from mcp_django.oauth.throttling import LoginThrottle, RegistrationThrottle, TokenThrottle, token_client_id
from mcp_django.scopes import Scope, get_scope_policy


def _registration_error(description: str) -> JsonResponse:
    return JsonResponse({"error": "invalid_client_metadata", "error_description": description}, status=400)


def _too_many(description: str, retry_after: int) -> JsonResponse:
    busy = JsonResponse({"error": "temporarily_unavailable", "error_description": description}, status=429)
    busy["Retry-After"] = str(retry_after)
    return busy


def _with_application_type(response: HttpResponse, application_type: Any) -> HttpResponse:
    """The registration response naming the `application_type` the registration was held to (SEP-837),
    which is stored with the client (`ClientMetadata`)."""
    if response.status_code not in (200, 201) or not isinstance(response, JsonResponse):
        return response
    body = json.loads(response.content)
    application = get_application_model().objects.filter(client_id=body.get("client_id")).first()
    if application is not None:
        ClientMetadata.objects.update_or_create(
            application=application, defaults={"application_type": application_type}
        )
    body["application_type"] = application_type
    response.content = json.dumps(body).encode()
    return response


class RegistrationView(DynamicClientRegistrationView):
    """RFC 7591 registration of a public MCP client; django-oauth-toolkit stores it as an `Application`."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttle = RegistrationThrottle()
        if not throttle.allow_request(request, self):
            retry_after = throttle.retry_after()
            return _too_many(f"Too many client registrations from this address; retry in {retry_after} s.", retry_after)
        try:
            data = client_metadata(request.body)
        except MetadataProblem as problem:
            return _registration_error(str(problem))
        request._body = json.dumps(data).encode()  # what the toolkit's view reads: the defaults made explicit
        return _with_application_type(super().post(request, *args, **kwargs), data["application_type"])


class RegistrationManagementView(DynamicClientRegistrationManagementView):
    """RFC 7592 reads, updates and deletes of a registration; an update must still describe a public MCP client."""

    def put(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        refused = self._authenticate_registration_request(request, client_id)
        if isinstance(refused, HttpResponse):
            return refused
        try:
            data = client_metadata(request.body)
        except MetadataProblem as problem:
            return _registration_error(str(problem))
        request._body = json.dumps(data).encode()
        return _with_application_type(super().put(request, client_id, *args, **kwargs), data["application_type"])

    def get(self, request: HttpRequest, client_id: str, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().get(request, client_id, *args, **kwargs)
        stored = ClientMetadata.objects.filter(application__client_id=client_id).first()
        if response.status_code != 200 or stored is None:
            return response
        body = json.loads(response.content)
        body["application_type"] = stored.application_type
        response.content = json.dumps(body).encode()
        return response


class ServerMetadataView(OAuthServerMetadataView):
    """RFC 8414 metadata, with the signing algorithms a `private_key_jwt` client assertion may use, and the
    JWT bearer grant while identity providers are trusted (and the server class takes it)."""

    def get(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response: HttpResponse = super().get(request, *args, **kwargs)
        data = json.loads(response.content)
        if "private_key_jwt" in data.get("token_endpoint_auth_methods_supported", ()):
            data["token_endpoint_auth_signing_alg_values_supported"] = list(SIGNING_ALGORITHMS)
        grants = data.get("grant_types_supported")
        if isinstance(grants, list) and JWT_BEARER not in grants and takes_identity_assertions():
            grants.append(JWT_BEARER)
        response.content = json.dumps(data).encode()
        return response


class RateLimitedTokenView(TokenView):
    """The toolkit's token endpoint, at most `OAUTH_TOKEN_RATE` requests per address and per client."""

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        throttles = {"this address": TokenThrottle(), "this client": TokenThrottle(token_client_id(request))}
        for who, throttle in throttles.items():
            if not throttle.within_rate(request):
                retry_after = throttle.retry_after()
                return _too_many(f"Too many token requests from {who}; retry in {retry_after} s.", retry_after)
        for throttle in throttles.values():  # counted only once both allow it: a refused request counts nowhere
            throttle.count()
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
            forced = request.GET.copy()
            forced["approval_prompt"] = "force"
            request.GET = forced  # type: ignore[assignment]  # a mutable copy where the stubs expect the parsed one
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
    problem = target_problem(resources, request.get_host())
    return None if problem is None else ("invalid_target", problem)


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
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        LoginThrottle().failed(self.request)
        return super().form_invalid(form)
