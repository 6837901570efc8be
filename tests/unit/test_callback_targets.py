"""Where callbacks may go: refused address kinds, literal hosts, and hosts that resolve there."""

from __future__ import annotations

import ipaddress

import pytest

from worker.callback_targets import literal_refusal, refused_kind, resolved_refusal

REFUSED = {
    "169.254.169.254": "link-local",  # the metadata service of most clouds
    "::ffff:169.254.169.254": "link-local",  # the same, IPv4-mapped
    "fe80::1": "link-local",
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
    "240.0.0.1": "reserved",
    "fd00:ec2::254": "a cloud metadata address",
    "100.100.100.200": "a cloud metadata address",
}
ALLOWED = ["127.0.0.1", "::1", "10.1.2.3", "192.168.0.10", "172.16.5.4", "fd12::1", "8.8.8.8"]


@pytest.mark.parametrize(("address", "kind"), REFUSED.items())
def test_addresses_no_gateway_lives_at_are_refused(address: str, kind: str) -> None:
    assert refused_kind(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize("address", ALLOWED)
def test_loopback_private_and_public_addresses_are_allowed(address: str) -> None:
    assert refused_kind(ipaddress.ip_address(address)) is None


def test_a_literal_host_is_judged_without_a_lookup() -> None:
    assert literal_refusal("http://169.254.169.254/latest/meta-data") == (
        "169.254.169.254 is link-local; callbacks only go to a gateway's address"
    )
    assert literal_refusal("https://[fe80::1]:8443/hook") is not None
    assert literal_refusal("http://127.0.0.1:9000/hook") is None
    assert literal_refusal("https://gateway.example/hook") is None  # a name: the worker resolves it


def test_a_name_is_refused_when_any_address_it_resolves_to_is() -> None:
    def resolve(host: str, port: int) -> list[str]:
        assert (host, port) == ("gw.internal", 443)
        return ["10.0.0.5", "fe80::1%eth0"]

    assert resolved_refusal("https://gw.internal/hook", resolve) == (
        "gw.internal (fe80::1) is link-local; callbacks only go to a gateway's address"
    )
    assert resolved_refusal("http://gw.internal:443/", lambda h, p: ["10.0.0.5"]) is None


def test_numeric_host_spellings_are_caught_by_the_real_resolver() -> None:
    # 2852039166 and 0xa9fea9fe are 169.254.169.254: not an IP literal to ipaddress, but the
    # C resolver (and so the HTTP client) reads them as one.
    for url in ("http://2852039166/latest", "http://0xa9fea9fe/latest"):
        assert literal_refusal(url) is None
        refusal = resolved_refusal(url)
        assert refusal is not None and "(169.254.169.254) is link-local" in refusal, url


def test_a_name_that_does_not_resolve_or_a_bad_port_is_left_to_the_post() -> None:
    def fails(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    assert resolved_refusal("http://nowhere.invalid/", fails) is None
    assert resolved_refusal("http://h:99999/", lambda h, p: ["169.254.169.254"]) is None
