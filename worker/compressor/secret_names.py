"""When a name announces a secret, and when the value after it is one: the redactor's judgement.

Code and prose are full of names like ``password_field``, ``token_count`` and ``max_tokens``, of
values like ``password=password``, ``token: str`` or ``api_key = os.environ[...]``, and of
sentences like "the token: it expires". Redacting those would wreck summaries of code, so the
rules below are narrower than "any name containing KEY", and they weigh where the value sits:
a YAML or env-file line, a quoted literal, a keyword argument, a sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum

MARKER = "[REDACTED]"

# Any marker we produced (or a summarizer wrote when told to): a value holding one is done.
MARKER_RE = re.compile(r"\[REDACTED[^\]\n]{0,40}\]")


class Strength(IntEnum):
    NONE = 0
    WEAK = 1  # a secret word, but not where it names the value: only credential-shaped values
    STRONG = 2  # OPENAI_API_KEY, password, clientSecret, X-Api-Key


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
# A name ending in one of these describes a secret, it does not hold one: PASSWORD_RESET_TIMEOUT,
# DB_PASSWORD_FILE, TOKEN_URL, SECRET_NAME, AWS_ACCESS_KEY_ID, PRIVATE_KEY_TYPES.
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
        "types",
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
        "env",
        "var",
        "template",
    }
)


def name_strength(name: str) -> Strength:
    """How surely a key, variable, flag or header name announces a secret value.

    Strong when its last segment does (``OPENAI_API_KEY``, ``PGPASSWORD``, ``clientSecret``,
    ``X-Api-Key``); weak when only an inner segment does (``SECRET_KEY_BASE``), unless the last
    segment describes the secret instead of holding it (``PASSWORD_RESET_TIMEOUT``).
    """
    segments = [s.lower() for s in _SEGMENT_RE.findall(name)]
    if not segments:
        return Strength.NONE
    last = len(segments) - 1
    if _is_secret_segment(segments, last):
        return Strength.STRONG
    if last == 0 or segments[last] in _DESCRIBING_SEGMENTS:
        return Strength.NONE
    if any(_is_secret_segment(segments, i) for i in range(last)):
        return Strength.WEAK  # SECRET_KEY_BASE, TOKEN_AUTH_SUCCESS, default_token_generator
    return Strength.NONE


def is_secret_name(name: str) -> bool:
    """Whether a name surely announces a secret (``password_field``, ``max_tokens`` do not)."""
    return name_strength(name) is Strength.STRONG


def _is_secret_segment(segments: list[str], i: int) -> bool:
    seg = segments[i]
    if seg in _SECRET_SEGMENTS or seg.endswith(_SECRET_SUFFIXES):
        return True
    return seg in ("key", "keys") and i > 0 and segments[i - 1] in _KEY_QUALIFIERS


# ---------------------------------------------------------------------------------------------
# Values

_LITERALS = frozenset(
    {
        "true",
        "false",
        "null",
        "none",
        "nil",
        "undefined",
        "yes",
        "no",
        "on",
        "off",
        "empty",
        "value",
        "string",
        "example",
        "dummy",
        "placeholder",
        "redacted",
        "hidden",
    }
)
_NUMBER_RE = re.compile(r"[+-]?\d+(?:[._]\d+)*(?:[eE][+-]?\d+)?[kKmMsS%]?")
_ARITHMETIC_RE = re.compile(r"\(?\d[\d.]*\)?(?:[-+*/]\(?\d[\d.]*\)?)+")  # 60*60*24*3
# References and placeholders stand for a value: $VAR, ${VAR}, $(cmd), {{ x }}, <your-key>, %s,
# %(name)s (a password may start "%(" too),
# your-api-key; masks hide one already: ****, xxxx, ..., •••.
_PLACEHOLDER_RE = re.compile(
    r"\$(?:[A-Z_][A-Z0-9_]*$|\{|\()|\{|<|%\(\w+\)|%[-#0 +]*\d*(?:\.\d+)?[sdrifxXc]$"
    r"|(?i:your|my)[-_ ]|[*xX.•·…_-]+$|.*(?:\*\*\*|…|xxxx|XXXX)|.*\.\.\.$"
)
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE_PATH_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")  # settings.SECRET_KEY
# Attribute names as people write them (snake_case, camelCase, CamelCase, CONSTANT); a dotted
# path of these with at most two digits is code, not a token such as ya29.a0AfH6SMBx8...
_READABLE_SEGMENT_RE = re.compile(r"[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][A-Za-z0-9_]*")
# NO_REPLY, TERMINAL_SSH_KEY, S3_BUCKET, AES_256: words, each letters with digits at its end;
# A0000A_A is how a random token looks.
_CONSTANT_RE = re.compile(r"[A-Z]+[0-9]*(?:_(?:[A-Z]+[0-9]*|[0-9]+))+")
# How keys, variables and headers are spelled (api_key, apiKey, X-Api-Key); 'test-secret-key'
# in lower-case kebab is more likely a made-up secret than a name.
_NAME_LIKE_RE = re.compile(
    r"[a-z_][a-z0-9_]*|[a-z]+(?:[A-Z][a-z0-9]*)+|[A-Z][A-Za-z0-9]*(?:-[A-Z][A-Za-z0-9]*)*"
)
_CAMEL_TYPE_RE = re.compile(r"[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*")  # PKCS7PrivateKeyTypes
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
        "dict",
        "list",
    }
)
_CALL_RE = re.compile(r"[A-Za-z_][\w.]*\(.*\)")
_CODE_WORDS = frozenset(
    {"self", "cls", "not", "and", "or", "is", "in", "lambda", "if", "else", "await", "yield", "new"}
)
_STRING_PREFIXES = frozenset({"f", "b", "r", "u", "rb", "br", "fr", "rf"})
QUOTES = ('\\"', '"', "'")  # a JSON-escaped quote first: it also starts with a backslash


@dataclass(frozen=True, slots=True)
class Assignment:
    """A value as it was found after a name, with what surrounds it."""

    name: str
    sep: str  # as written, spaces included: "=", " = ", ": ", "=>"
    raw: str  # the value as written, quotes included
    following: str = ""  # the character right after the value ("" at the end of the text)
    line_start: bool = True  # the name opens its line (YAML keys, env files, headers)
    line_end: bool = True  # only spaces or a comment follow the value on its line


def unquote(raw: str) -> tuple[str, str]:
    """Split a raw value into (inner text, its quote); the quote is "" for a bare value."""
    for quote in QUOTES:
        if len(raw) >= 2 * len(quote) and raw.startswith(quote) and raw.endswith(quote):
            return raw[len(quote) : -len(quote)], quote
    return raw, ""


def is_placeholder(inner: str) -> bool:
    """Already redacted, a reference to a value, or a mask: nothing left to hide."""
    return (
        not inner.strip()
        or MARKER_RE.search(inner) is not None
        or _PLACEHOLDER_RE.match(inner) is not None
    )


def is_nothing_to_hide(inner: str) -> bool:
    """A placeholder, a literal such as ``true`` or ``null``, a number or an arithmetic sum."""
    return (
        is_placeholder(inner)
        or inner.lower() in _LITERALS
        or _NUMBER_RE.fullmatch(inner) is not None
        or _ARITHMETIC_RE.fullmatch(inner) is not None
    )


def looks_like_credential(value: str) -> bool:
    """Random-looking enough to be a credential wherever it stands: letters mixed with digits,
    or a long mixed-case base64-like run. Words, identifiers of code and prose are not."""
    if len(value) < 8 or any(c.isspace() for c in value):
        return False
    has_digit = any(c.isdigit() for c in value)
    has_lower = any(c.islower() for c in value)
    has_upper = any(c.isupper() for c in value)
    if has_digit and (has_lower or has_upper):
        return True
    return (
        len(value) >= 16
        and has_lower
        and has_upper
        and _BASE64ISH.fullmatch(value) is not None
        and _NAMING_CONVENTION_RE.fullmatch(value) is None
    )


_BASE64ISH = re.compile(r"[A-Za-z0-9+/=_.~-]+")
# PasswordResetTokenGenerator, getAuthToken, Some_Mixed_Name: long mixed case, but a name.
_NAMING_CONVENTION_RE = re.compile(
    r"[a-z]*(?:[A-Z]{1,4}[a-z]+)+[A-Z]{0,4}|(?:[A-Z][a-z]+_?)+|[a-z]+(?:[._-][A-Z]?[a-z]+)+"
)
_SYMBOLS_RE = re.compile(r"[!@#%^&*+=?~|$]")  # what a word, a path or a hyphenated name lacks
# axios/1.7.9, v2.10.1-rc1, 2024-01-02, 10.0.0.1: versions, dates and addresses, not secrets.
_VERSIONISH_RE = re.compile(
    r"(?:[A-Za-z][\w-]*[/@ -]?)?v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?|\d{1,4}(?:[-/:.]\d{1,4})+"
)


def is_secret_value(found: Assignment) -> bool:
    """Whether the value after a secret name is a secret worth hiding."""
    strength = name_strength(found.name)
    inner, quote = unquote(found.raw)
    if strength is Strength.NONE or is_nothing_to_hide(inner) or found.following == "{":
        return False  # "{" right after: a template such as sk-proj-{tok40}
    if not quote and _is_code(inner, found.following, literal=_is_env_line(found)):
        return False
    if strength is Strength.WEAK:
        return looks_like_credential(inner) and not _VERSIONISH_RE.fullmatch(inner)
    if quote:
        return _quoted_is_secret(found.name, inner)
    return _bare_is_secret(found, inner)


def _quoted_is_secret(name: str, inner: str) -> bool:
    if _CONSTANT_RE.fullmatch(inner) or (_NAME_LIKE_RE.fullmatch(inner) and is_secret_name(inner)):
        return False  # names a secret rather than being one: "SUDO_PASSWORD", "X-API-Key"
    if _CALL_RE.fullmatch(inner):
        return False  # "os.getenv('X')": code quoted in a string
    return len(inner) >= 3 or name.upper() == name


def _bare_is_secret(found: Assignment, inner: str) -> bool:
    sep = found.sep.strip()
    if sep == ":":
        return _bare_after_colon(found, inner)
    if found.sep[:1].isspace() != found.sep[-1:].isspace():
        return False  # "NAME= value": an empty assignment, then something else
    if found.name.upper() == found.name:
        return not _CONSTANT_RE.fullmatch(inner)  # PASSWORD=changeme; API_KEY = DEFAULT_KEY is code
    if not _IDENT_RE.fullmatch(inner) or looks_like_credential(inner):
        return True  # p@ss!, hunter2025
    # A word: in code "name = word" assigns and "f(name=word, ...)" passes a variable; a tight
    # "name=word" ending in a space or a quote is a shell variable or a DSN field (password=s3cret).
    return not found.sep[:1].isspace() and found.following not in (",", ")")


def _bare_after_colon(found: Assignment, inner: str) -> bool:
    """YAML keys, headers, type annotations and prose all put a colon after a name."""
    annotation = _CAMEL_TYPE_RE.fullmatch(inner) and found.following in (
        "",
        ",",
        ")",
        "=",
        "|",
        "]",
    )
    if inner.lower() in _TYPE_NAMES or annotation:
        return False  # token: str, private_key: PKCS7PrivateKeyTypes,
    if looks_like_credential(inner) or (
        not _IDENT_RE.fullmatch(inner) and _SYMBOLS_RE.search(inner)
    ):
        return True  # hunter2025, s3cr3t!, p@ss: no words (boto3, python3 are)
    # A word after "password:" is a value only on a YAML line of its own; in a sentence
    # ("the token: it expires", "secrets: platform/chat") or an object literal
    # ({token: token}) it is not.
    return found.line_start and found.line_end


def _is_env_line(found: Assignment) -> bool:
    """NAME=value and NAME: value (env files, shell, YAML) hold literals: a shell variable
    would need a "$", so NAME=my_token is the value "my_token", not a variable."""
    return found.name.upper() == found.name and (found.sep == "=" or found.sep.strip() == ":")


def _is_readable_segment(segment: str) -> bool:
    # Names put digits at the end of a word (S3_KEY, HTTP2Settings, v1, X509Certificate); a
    # digit run inside or at the start of a word, as in A00AAA, A0000A_A or A_00AA, is how
    # random tokens look.
    return _READABLE_SEGMENT_RE.fullmatch(segment) is not None and not _DIGITS_INSIDE_RE.search(
        segment
    )


_DIGITS_INSIDE_RE = re.compile(r"\d[a-z]|[A-Z]\d+[A-Z](?![a-z])|(?:^|_)\d+[A-Z]")


def _is_code(inner: str, following: str, *, literal: bool = False) -> bool:
    if inner in _CODE_WORDS:
        return True  # token=self, password=not default
    if not literal and _IDENT_RE.fullmatch(inner) and is_secret_name(inner):
        return True  # password=raw_password, API_KEY = api_token
    if following in ("(", "[") and (_IDENT_RE.fullmatch(inner) or _CODE_PATH_RE.fullmatch(inner)):
        return True  # a call or a subscript
    if following in ("'", '"') and inner.lower() in _STRING_PREFIXES:
        return True  # token = f"Bearer {value}"
    if _CODE_PATH_RE.fullmatch(inner) and not (literal and following not in (",", ")")):
        # settings.SECRET_KEY is code; NAME=A.b1c2 on an env line is a literal, unless it is
        # an upper-case keyword argument, f(API_KEY=config.key).
        segments = inner.split(".")
        digits = sum(c.isdigit() for c in inner)
        return digits <= 2 and all(_is_readable_segment(s) for s in segments)
    return False
