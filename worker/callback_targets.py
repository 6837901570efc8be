"""Where a job-completion callback may go: never to an address no gateway lives at.

A ``callback_url`` comes from the gateway and the worker POSTs to it, so it must not become a way
to make the worker reach what only the worker can reach. Cloud metadata services answer on
link-local addresses (169.254.169.254), and multicast, unspecified (0.0.0.0, ``::``) and
reserved addresses are never a gateway either: those are refused. Loopback and private
networks stay allowed, since that is where a gateway usually runs (and the embedded stack's
own, on 127.0.0.1).

The API refuses a URL whose host is such an address literally (no DNS lookup on the request
path); the worker resolves the host right before each delivery and refuses when any address it
resolves to is one, which also catches names that point there. A name that changes its answer
between that lookup and the connection (DNS rebinding) is not caught: an egress firewall is
the complete answer, and docs/deploy.md says so.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[[str, int], Iterable[str]]


# Metadata services outside link-local space: AWS's IPv6 endpoint, Alibaba Cloud's.
_METADATA = frozenset(map(ipaddress.ip_address, ("fd00:ec2::254", "100.100.100.200")))


def refused_kind(address: IPAddress) -> str | None:
    """``"link-local"``, ``"multicast"``, ``"unspecified"``, ``"reserved"``, ``"a cloud
    metadata address"``, or None when a gateway may live there (loopback included)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return None  # ::1 sits in IPv6's reserved ::/8, but it is the local gateway
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_unspecified:
        return "unspecified"
    if address.is_reserved:
        return "reserved"
    return None


def literal_refusal(url: str) -> str | None:
    """Why ``url``'s host, when it is an IP address, may not receive callbacks; else None."""
    host = urlsplit(url).hostname
    if host is None:
        return None
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None  # a name: checked by the worker when it resolves it
    kind = refused_kind(address)
    return None if kind is None else _explain(host, address, kind)


def resolved_refusal(url: str, resolve: Resolve | None = None) -> str | None:
    """Why any address ``url``'s host resolves to may not receive callbacks; else None.

    A host that does not resolve is not refused here: the connection fails and is retried.
    """
    parts = urlsplit(url)
    if parts.hostname is None:
        return None
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
        addresses = list((resolve or _getaddrinfo)(parts.hostname, port))
    except (OSError, ValueError):  # no such name, or a bad port: the POST fails and says so
        return None
    for text in addresses:
        address = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone
        kind = refused_kind(address)
        if kind is not None:
            return _explain(parts.hostname, address, kind)
    return None


def _getaddrinfo(host: str, port: int) -> list[str]:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


def _explain(host: str, address: IPAddress, kind: str) -> str:
    where = host if _is_literal(host, address) else f"{host} ({address})"
    return f"{where} is {kind}; callbacks only go to a gateway's address"


def _is_literal(host: str, address: IPAddress) -> bool:
    try:
        return ipaddress.ip_address(host) == address
    except ValueError:
        return False
