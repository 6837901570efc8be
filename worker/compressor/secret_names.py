"""When a name announces a secret, and when the value after it is one: the redactor's judgement.

Code is full of names like ``password_field``, ``token_count`` and ``max_tokens``, and of values
like ``password=password`` or ``token: str``. Redacting those would wreck summaries of code, so
the rules below are deliberately narrower than "any name containing KEY".
"""

from __future__ import annotations

import re

MARKER = "[REDACTED]"

# Any marker we produced (or a summarizer wrote when told to): a value holding one is done.
MARKER_RE = re.compile(r"\[REDACTED[^\]\n]{0,40}\]")

_SEGMENT_RE = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_SEGMENTS = frozenset(
    {
        "token",
        "secret",
        "secrets",
        "password",
        "passwords",
        "passwd",
        "pwd",
        "passphrase",
        "credential",
        "credentials",
        "apikey",
    }
)
# Run-together words: PGPASSWORD, authtoken, apikey, clientsecret.
_SECRET_SUFFIXES = ("token", "secret", "password", "passwd", "apikey", "secretkey", "privatekey")
# "key" alone names dict keys, cache keys and primary keys; these qualifiers make it a secret.
_KEY_QUALIFIERS = frozenset(
    {
        "api",
        "secret",
        "private",
        "access",
        "signing",
        "encryption",
        "encrypt",
        "decryption",
        "auth",
        "client",
        "master",
        "account",
        "app",
        "admin",
        "service",
        "shared",
        "hmac",
        "webhook",
        "subscription",
        "license",
        "consumer",
        "deploy",
        "ssh",
        "gpg",
        "pgp",
        "jwt",
        "crypto",
        "storage",
    }
)


# An environment-style name ending in one of these describes a secret, it does not hold one:
# PASSWORD_RESET_TIMEOUT, DB_PASSWORD_FILE, TOKEN_URL, SECRET_NAME, AWS_ACCESS_KEY_ID.
_DESCRIBING_SEGMENTS = frozenset(
    {
        "timeout",
        "ttl",
        "length",
        "len",
        "count",
        "limit",
        "size",
        "max",
        "min",
        "expiry",
        "expires",
        "expiration",
        "age",
        "lifetime",
        "file",
        "path",
        "dir",
        "url",
        "uri",
        "endpoint",
        "name",
        "type",
        "header",
        "prefix",
        "hashers",
        "validators",
        "backend",
        "backends",
        "algorithm",
        "field",
        "format",
        "id",
        "version",
        "enabled",
        "required",
    }
)


def is_secret_name(name: str) -> bool:
    """Whether a key, variable, flag or header name announces a secret value.

    Upper-case (environment-style) names qualify when any segment does (``AWS_SECRET_ACCESS_KEY``,
    ``PGPASSWORD``, ``DB_PASSWORD_FILE``); other names only by their last segment, so that
    ``password_field``, ``token_count`` and ``max_tokens`` stay what they are: code.
    """
    segments = [s.lower() for s in _SEGMENT_RE.findall(name)]
    if not segments:
        return False
    last = len(segments) - 1
    if name.upper() != name:
        return _is_secret_segment(segments, last)
    if last > 0 and segments[last] in _DESCRIBING_SEGMENTS:
        return False
    return any(_is_secret_segment(segments, i) for i in range(last + 1))


def _is_secret_segment(segments: list[str], i: int) -> bool:
    seg = segments[i]
    if seg in _SECRET_SEGMENTS or seg.endswith(_SECRET_SUFFIXES):
        return True
    return seg in ("key", "keys") and i > 0 and segments[i - 1] in _KEY_QUALIFIERS


_LITERALS = frozenset(
    {"true", "false", "null", "none", "nil", "undefined", "yes", "no", "on", "off", "empty"}
)
_NUMBER_RE = re.compile(r"[+-]?\d+(?:[._]\d+)*(?:[eE][+-]?\d+)?[kKmMsS%]?")
_ARITHMETIC_RE = re.compile(r"\(?\d[\d.]*\)?(?:[-+*/]\(?\d[\d.]*\)?)+")  # 60*60*24*3
# References and placeholders stand for a value: $VAR, ${VAR}, {{ x }}, <your-key>, %(x)s,
# and masks that hide one already: ****, xxxx, ...
_PLACEHOLDER_RE = re.compile(r"\$|\{|<|%\(|[*xX.•·…_-]+$")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# settings.SECRET_KEY, os.environ, self.password: an attribute path made of words, no digits
# (a token such as ya29.a0AfH6SMB has them).
_DOTTED_RE = re.compile(r"[A-Za-z_$][A-Za-z_$]*(?:\.[A-Za-z_$][A-Za-z_$]*)+")
_TYPE_NAMES = frozenset(
    {
        "str",
        "string",
        "bytes",
        "int",
        "bool",
        "boolean",
        "number",
        "object",
        "any",
        "optional",
        "secretstr",
        "text",
        "char",
        "varchar",
        "uuid",
    }
)
_STRING_PREFIXES = frozenset({"f", "b", "r", "u", "rb", "br", "fr", "rf"})
QUOTES = ('\\"', '"', "'")  # a JSON-escaped quote first: it also starts with a backslash


def unquote(raw: str) -> tuple[str, str]:
    """Split a raw value into (inner text, its quote); the quote is "" for a bare value."""
    for quote in QUOTES:
        if len(raw) >= 2 * len(quote) and raw.startswith(quote) and raw.endswith(quote):
            return raw[len(quote) : -len(quote)], quote
    return raw, ""


def is_nothing_to_hide(inner: str) -> bool:
    """Empty, already redacted, a literal, a number or a placeholder."""
    return (
        not inner.strip()
        or MARKER_RE.search(inner) is not None
        or inner.lower() in _LITERALS
        or _NUMBER_RE.fullmatch(inner) is not None
        or _ARITHMETIC_RE.fullmatch(inner) is not None
        or _PLACEHOLDER_RE.match(inner) is not None
    )


def is_secret_value(name: str, sep: str, raw: str, following: str) -> bool:
    """Whether ``raw`` (quoted or bare) after ``name`` and ``sep`` is a value worth hiding.

    Args:
        following: the character right after the value ("" at the end), to tell code apart.
    """
    inner, quote = unquote(raw)
    if is_nothing_to_hide(inner):
        return False
    if quote:
        return len(inner) >= 3 or name.upper() == name
    if _DOTTED_RE.fullmatch(inner):
        return False  # settings.SECRET_KEY: an attribute, code rather than a value
    if not _IDENT_RE.fullmatch(inner):
        return True
    if following in ("(", "["):
        return False  # a call or a subscript
    if following in ("'", '"') and inner.lower() in _STRING_PREFIXES:
        return False  # token = f"Bearer {value}"
    return _is_secret_identifier(name, sep.strip(), inner)


def _is_secret_identifier(name: str, sep: str, ident: str) -> bool:
    """A bare identifier after a secret name: a literal in env/YAML files, a variable in code."""
    if is_secret_name(ident) or ident.lower() in _TYPE_NAMES:
        return False  # password=raw_password, token: str
    if name.upper() == name:
        return True  # PASSWORD=changeme
    if sep == ":":
        return not (ident[0].isupper() and not any(c.isdigit() for c in ident))  # a type name
    # name=ident in code is a keyword argument or assignment; only a token-like word is a value.
    return len(ident) >= 6 and any(c.isdigit() for c in ident) and any(c.isalpha() for c in ident)
