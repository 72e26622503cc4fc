"""Exceptions of the host package. Every message is one line, fit to show a user as is."""

__all__ = ["WirespeedError", "TransportError", "DeviceError", "DeviceMismatch", "ConnectError"]


class WirespeedError(Exception):
    """Base class of the errors the host software reports to its user."""


class TransportError(WirespeedError):
    """The register transport failed: no answer, a malformed answer, a socket error."""


class DeviceError(WirespeedError):
    """The tester did not behave as its register contract says (e.g. a trial never ends)."""


class DeviceMismatch(DeviceError):
    """The tester answered, but it is not the gateware this host software was built for."""


class ConnectError(WirespeedError):
    """Why the target cannot be used, as one line ``<field>: <message>`` (``detail``: more lines
    to show before it, e.g. the end of a simulation's log); ``exit_code`` 2 for bad input, 1
    for a failure of the target itself."""

    def __init__(self, field: str, message: str, exit_code: int = 2, detail: str = ""):
        super().__init__(f"{field}: {message}")
        self.field, self.message, self.exit_code, self.detail = field, message, exit_code, detail
