"""Bearer auth for ``/v1/*``: one check, run before anything reads the request body.

FastAPI reads and parses a body before it runs a route's dependencies, so a dependency alone
would answer a malformed body from an unauthenticated caller with a 422 that describes it. The
middleware refuses such a caller first; ``api.deps.require_token`` runs the same check on the
routers as well.
"""

from __future__ import annotations

import hmac

from pydantic import SecretStr
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from api.errors import ApiProblem, problem_response

PROTECTED_PREFIX = "/v1"


def token_refusal(token: SecretStr | None, authorization: str) -> ApiProblem | None:
    """Why a request with this ``Authorization`` header is refused, or None.

    No token configured: no auth. A blank one (settings refuse it; a copy made without
    validation could still carry it) matches nothing, so it refuses everyone.
    """
    if token is None:
        return None
    scheme, _, given = authorization.partition(" ")
    expected = token.get_secret_value().strip().encode()
    presented = given.strip().encode()
    if scheme.lower() == "bearer" and expected and hmac.compare_digest(presented, expected):
        return None
    return ApiProblem(
        401,
        "unauthorized",
        "a valid 'Authorization: Bearer <token>' header is required",
        headers={"WWW-Authenticate": 'Bearer realm="compaction"'},
    )


def is_protected(path: str) -> bool:
    return path == PROTECTED_PREFIX or path.startswith(PROTECTED_PREFIX + "/")


class BearerAuthMiddleware:
    """401 for ``/v1/*`` without the token, before the body is read or validated."""

    def __init__(self, app: ASGIApp, token: SecretStr | None) -> None:
        self.app, self.token = app, token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and is_protected(scope["path"]):
            header = Headers(scope=scope).get("authorization", "")
            problem = token_refusal(self.token, header)
            if problem is not None:
                response = problem_response(
                    problem.status, problem.slug, problem.detail, headers=problem.headers
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)
