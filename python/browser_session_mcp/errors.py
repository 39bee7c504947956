"""The client's errors: ``ServiceError`` and one subclass per error code, so ``except SessionNotFound`` works and
``except ServiceError`` still catches everything.

The server's codes are those of ``ErrorBody.error.code`` in ``/v1/openapi.json`` (``src/core/errors.ts``);
``tests/test_openapi.py`` checks that each has a class here. A code the client does not know yet stays a plain
``ServiceError``. Failures with no answer from the server have codes of the client's own (``unreachable``,
``client_timeout``, ``invalid_response``) and ``status`` None (or the status of an answer that was not the service's).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Type


class ServiceError(Exception):
    """An error answered by the service, or met on the way to it.

    ``code`` is the stable error code (``session_not_found``, ``invalid_argument``, ...), ``status`` the HTTP status,
    ``details`` the error's details (the zod issues of ``invalid_argument``), ``retry_after`` the seconds of the
    answer's ``Retry-After`` header (None without one): the server sends it only when it refused the call before
    doing anything, so it is safe to send again after that long.
    """

    #: The codes this class stands for (the subclasses set it; a plain ServiceError has any code).
    codes: "tuple[str, ...]" = ()

    def __init__(
        self,
        code: str,
        message: str,
        status: Optional[int] = None,
        details: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.details = details
        self.retry_after = retry_after

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r}, message={self.message!r})"


# Groups: catch a family at once (``except NotFound`` catches session_not_found, frame_not_found, ...).


class InvalidArgument(ServiceError):
    """400: the request is not valid (``details["issues"]`` names the fields)."""

    codes = ("invalid_argument",)


class NotFound(ServiceError):
    """404: no such route, or (subclasses) no such session, profile, stored run, frame or element ref for this key."""

    codes = ("not_found",)


class Timeout(ServiceError):
    """The *server* gave up waiting (``timeout`` 408, and the subclasses ``action_timeout``, ``navigation_timeout``).
    Not the client's own socket timeout, which is ``ClientTimeout``."""

    codes = ("timeout",)


class RateLimited(ServiceError):
    """429: refused for now, nothing was done (``session_limit``: too many open sessions). ``retry_after`` is the
    server's Retry-After in seconds; the client retries by itself first (``retries=``)."""

    codes = ()


class Unavailable(ServiceError):
    """503: the browser, a peer instance holding the session, or the server (shutting down) cannot serve now."""

    codes = ()


class ModelError(ServiceError):
    """422 from the model side: the model failed, is not configured, or its answer was not usable."""

    codes = ("model_error",)


class TransportError(ServiceError):
    """No usable answer from the service: the client's own codes, ``status`` None unless an answer came."""

    codes = ()


# One class per server code (the names are the codes in CamelCase).


class InvalidJson(InvalidArgument):
    codes = ("invalid_json",)


class UrlNotAllowed(InvalidArgument):
    """400: the URL's scheme or host is refused (egress policy, docs/egress.md)."""

    codes = ("url_not_allowed",)


class SelectorNotFound(InvalidArgument):
    codes = ("selector_not_found",)


class SelectorAmbiguous(InvalidArgument):
    """400: act's selector matches several visible elements; the message lists the first ones."""

    codes = ("selector_ambiguous",)


class Unauthorized(ServiceError):
    """401: missing or wrong API key."""

    codes = ("unauthorized",)


class Forbidden(ServiceError):
    codes = ("forbidden",)


class HostNotAllowed(Forbidden):
    codes = ("host_not_allowed",)


class OptionNotAllowed(Forbidden):
    codes = ("option_not_allowed",)


class OperationNotAllowed(Forbidden):
    """403: the operator turned this operation off (``--operations-denied``)."""

    codes = ("operation_not_allowed",)


class VariableNotAllowed(Forbidden):
    """403: a variable given with ``origins`` would be typed into (or sent to) a page of another origin."""

    codes = ("variable_not_allowed",)


class SessionNotFound(NotFound):
    """404: no such session for this API key (never started, ended, expired, or another key's)."""

    codes = ("session_not_found",)


class ProfileNotFound(NotFound):
    codes = ("profile_not_found",)


class RunNotFound(NotFound):
    """404: no run is kept under this runId for this API key (never stored, let go for the bound, or another key's)."""

    codes = ("run_not_found",)


class FrameNotFound(NotFound):
    codes = ("frame_not_found",)


class RefNotFound(NotFound):
    """404: the element ref is not on the page any more; read the page again."""

    codes = ("ref_not_found",)


class MethodNotAllowed(ServiceError):
    codes = ("method_not_allowed",)


class ActionTimeout(Timeout):
    codes = ("action_timeout",)


class ElementCovered(ServiceError):
    """409: another element (a dialog, a banner, an overlay) takes the pointer where the action would press, or the
    element does not take it at all; the message names the cover and its refs, ``details["coverRef"]`` its own ref."""

    codes = ("element_covered",)


class NavigationTimeout(Timeout):
    codes = ("navigation_timeout",)


class Cancelled(ServiceError):
    codes = ("cancelled",)


class PayloadTooLarge(ServiceError):
    codes = ("payload_too_large",)


class UnsupportedMediaType(ServiceError):
    codes = ("unsupported_media_type",)


class ModelNotConfigured(ModelError):
    codes = ("model_not_configured",)


class ExtractionInvalid(ModelError):
    codes = ("extraction_invalid",)


class EvaluationFailed(ServiceError):
    """422: an ``evaluate`` script threw, or its value is not JSON (or over 1 MiB of it); the message has the page's."""

    codes = ("evaluation_failed",)


class AgentError(ModelError):
    codes = ("agent_error",)


class IntegrationError(ServiceError):
    codes = ("integration_error",)


class PageTooLarge(ServiceError):
    codes = ("page_too_large",)


class ProfilesNotConfigured(ServiceError):
    codes = ("profiles_not_configured",)


class ProfileUnreadable(ServiceError):
    codes = ("profile_unreadable",)


class SessionClosed(ServiceError):
    """410: the session was closed while the call ran."""

    codes = ("session_closed",)


class RecordingNotEnabled(ServiceError):
    codes = ("recording_not_enabled",)


class SessionLimit(RateLimited):
    """429: this key, or the server, holds as many sessions as allowed; nothing was started."""

    codes = ("session_limit",)


class ViewerLimit(RateLimited):
    """429: the session's live view already has as many viewers as it may (answered to a live-view page or socket)."""

    codes = ("viewer_limit",)


class PageCrashed(ServiceError):
    codes = ("page_crashed",)


class InternalError(ServiceError):
    codes = ("internal",)


class NotImplementedByServer(ServiceError):
    codes = ("not_implemented",)


class RecordingUnavailable(ServiceError):
    codes = ("recording_unavailable",)


class NavigationFailed(ServiceError):
    codes = ("navigation_failed",)


class BrowserUnavailable(Unavailable):
    """503: no browser can serve (host lost, server shutting down)."""

    codes = ("browser_unavailable",)


class SessionUnavailable(Unavailable):
    """503: the session lives on a peer instance that does not answer now."""

    codes = ("session_unavailable",)


class Unreachable(TransportError):
    """No connection to the service (refused, DNS, reset before an answer)."""

    codes = ("unreachable",)


class ClientTimeout(TransportError):
    """Nothing received for the client's ``timeout`` seconds. The server may still be working on the call."""

    codes = ("client_timeout",)


class InvalidResponse(TransportError):
    """An answer that is not the service's JSON (a proxy, a wrong address) or a stream cut short."""

    codes = ("invalid_response",)


def _classes(base: Type[ServiceError]) -> Dict[str, Type[ServiceError]]:
    found: Dict[str, Type[ServiceError]] = {}
    for cls in base.__subclasses__():
        found.update({code: cls for code in cls.codes})
        found.update(_classes(cls))
    return found


#: Each known code and its class.
ERROR_CLASSES: Dict[str, Type[ServiceError]] = _classes(ServiceError)

#: Codes that only the client produces (never in a server's answer).
CLIENT_CODES = ("unreachable", "client_timeout", "invalid_response")


def error_for(
    code: str,
    message: str,
    status: Optional[int] = None,
    details: Optional[Dict[str, Any]] = None,
    retry_after: Optional[float] = None,
) -> ServiceError:
    """The error of ``code``: its class when the client knows it, else a plain ``ServiceError``."""
    return ERROR_CLASSES.get(code, ServiceError)(code, message, status, details, retry_after)
