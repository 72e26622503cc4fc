"""Exceptions of the host package. Every message is one line, fit to show a user as is."""

__all__ = ["WirespeedError", "TransportError", "DeviceError", "DeviceMismatch"]


class WirespeedError(Exception):
    """Base class of the errors the host software reports to its user."""


class TransportError(WirespeedError):
    """The register transport failed: no answer, a malformed answer, a socket error."""


class DeviceError(WirespeedError):
    """The tester did not behave as its register contract says (e.g. a trial never ends)."""


class DeviceMismatch(DeviceError):
    """The tester answered, but it is not the gateware this host software was built for."""
