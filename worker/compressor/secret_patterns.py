"""What secrets look like: the redactor's pipeline of passes, in the order they run.

Each pass is guarded by cheap substring "needles", so text without e.g. ``://`` never pays for
the URL pass, and each pattern starts with a literal or a small character class (boundaries are
checked after the match, not by a leading look-behind) so the regex engine can skip ahead. No
pattern nests quantifiers over overlapping classes: matching stays linear in the text length.
Prefixes, key names, URL hosts and header names stay; only the secret part becomes a marker.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from worker.compressor.secret_names import (
    MARKER,
    MARKER_RE,
    QUOTES,
    Assignment,
    is_placeholder,
    is_secret_name,
    is_secret_value,
    looks_like_credential,
    name_strength,
    unquote,
)
from worker.compressor.secret_vendors import VENDOR_TOKENS, VendorToken

PRIVATE_KEY_MARKER = "[REDACTED PRIVATE KEY]"


class Pass(NamedTuple):
    needles: tuple[str, ...]  # lower-case substrings; none present: the pass is skipped
    apply: Callable[[str], tuple[str, int]]  # text -> (redacted text, secrets replaced)


# ---------------------------------------------------------------------------------------------
# Building blocks

Replacer = Callable[[re.Match[str]], str]
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_UNICODE_ESCAPE = re.compile(r"u[0-9A-Fa-f]{4}")  # after a backslash: one escaped character


def _regex_pass(
    pattern: re.Pattern[str],
    replacer: Replacer,
    *needles: str,
    gate: re.Pattern[str] | None = None,
) -> Pass:
    """A pass that substitutes ``pattern``; ``gate``, a cheaper pattern, must match first."""

    def apply(text: str) -> tuple[str, int]:
        if gate is not None and gate.search(text) is None:
            return text, 0
        count = 0

        def substitute(match: re.Match[str]) -> str:
            nonlocal count
            new = replacer(match)
            if new != match.group(0):
                count += 1
            return new

        return pattern.sub(substitute, text), count

    return Pass(needles, apply)


def _starts_token(text: str, i: int, extra: str = "") -> bool:
    """Nothing token-like right before ``i``; a JSON escape such as ``\\n`` counts as a break."""
    if i == 0:
        return True
    before = text[i - 1]
    if before not in _TOKEN_CHARS and before not in extra:
        return True
    if before in "nrt" and i >= 2 and text[i - 2] == "\\":
        return True
    return i >= 6 and text[i - 6] == "\\" and _UNICODE_ESCAPE.fullmatch(text, i - 5, i) is not None


def _hide_group(m: re.Match[str], group: str, marker: str = MARKER) -> str:
    """The match with only ``group`` (the secret) replaced; a value already marked stays."""
    if MARKER_RE.search(m.group(group)):
        return m.group(0)
    start, end = m.start(group) - m.start(), m.end(group) - m.start()
    whole = m.group(0)
    return whole[:start] + marker + whole[end:]


def _hide_value(m: re.Match[str], group: str = "value") -> str:
    """Replace a possibly quoted value with a marker inside the same quotes."""
    _, quote = unquote(m.group(group))
    return _hide_group(m, group, f"{quote}{MARKER}{quote}")


# ---------------------------------------------------------------------------------------------
# Vendor-prefixed keys (the table is in secret_vendors.py): the prefix stays, it tells a reader
# which vendor's key this was.

# A lower-case kebab-case body is a name (sk-learn-style), not a random key.
_KEBAB_RE = re.compile(r"[a-z]+(?:-[a-z]+)+")


def _after_boundary(head: str) -> str:
    """``head`` that starts a token: not glued to a token before it, a JSON escape aside.

    The check is a look-behind placed after the head; a leading look-behind would make the
    engine try the whole pattern at every position, and a match that starts inside a long run
    of token characters would be retried at every later offset of that run.
    """
    return rf"{head}(?:(?<![A-Za-z0-9_-]{head})|(?<=\\[nrt]{head})|(?<=\\u[0-9A-Fa-f]{{4}}{head}))"


def _vendor_replace(m: re.Match[str]) -> str:
    if _KEBAB_RE.fullmatch(m.group("body")):
        return m.group(0)
    return m.group("prefix") + MARKER


def _random_vendor_replace(m: re.Match[str]) -> str:
    if not looks_like_credential(m.group("body")):
        return m.group(0)
    return _vendor_replace(m)


def _vendor_pass(token: VendorToken) -> Pass:
    pattern = re.compile(
        rf"(?P<prefix>{_after_boundary(token.head)}{token.rest})(?P<body>{token.body})"
    )
    replace = _random_vendor_replace if token.random_only else _vendor_replace
    return _regex_pass(pattern, replace, *token.needles)


# ---------------------------------------------------------------------------------------------
# Structured secrets: private keys, URLs, headers, JWTs, bot tokens.

# Bodies are consumed possessively and may not run into another "-----" line, so each BEGIN
# costs only its own block. A block cut off before its END line is hidden as far as it still
# looks like one: base64 lines of 16+ characters and the Proc-Type/DEK-Info headers.
_PEM_BEGIN = r"-----BEGIN[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
_PEM_END = r"-----END[A-Z0-9 ]{0,30} PRIVATE KEY(?: BLOCK)?-----"
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s\\:,.]|-(?!----))*+"
_PEM_LINE = r"(?:[A-Za-z0-9+/=]{16,}+|(?:Proc-Type|DEK-Info):[^\n\\]*+)"
_PEM_CUT_BODY = rf"(?:(?:\s|\\[nr])*+{_PEM_LINE})++"  # a bare BEGIN line (code) is no key
_PEM = re.compile(rf"{_PEM_BEGIN}(?:(?P<body>{_PEM_BODY}){_PEM_END}|{_PEM_CUT_BODY})")

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{8}")


def _pem_replace(m: re.Match[str]) -> str:
    body = m.group("body")
    if body is not None and not _BASE64_RUN.search(body):
        return m.group(0)  # "-----BEGIN RSA PRIVATE KEY----- ... -----END ..." in docs: no key
    return PRIVATE_KEY_MARKER


# Userinfo of any URL, databases and brokers included: scheme://user:password@host. The user
# stays; the password runs to the last "@" of the authority (passwords may hold "@"). A user
# alone that is a random token is the credential itself: a Sentry DSN's key, a git remote's
# https://TOKEN@host.
_URL_USERINFO = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]{0,30}://"
    r"(?:[^\s:/@?#'\"\\<>]*:(?P<pw>[^\s/?#'\"\\<>]+)|(?P<user>[A-Za-z0-9]{20,}))@"
    r"(?=[A-Za-z0-9\[._-])"
)

# Passwords of documentation examples (https://user:password@host) are no secret to hide.
_EXAMPLE_PASSWORDS = frozenset({"password", "pass", "passwd", "pwd", "pw", "secret", "token"})


def _url_password_replace(m: re.Match[str]) -> str:
    if m.group("pw") is None:
        return _hide_group(m, "user") if looks_like_credential(m.group("user")) else m.group(0)
    if _is_example_password(m.group("pw")):
        return m.group(0)
    return _hide_group(m, "pw")


def _is_example_password(password: str) -> bool:
    return password.lower() in _EXAMPLE_PASSWORDS or is_placeholder(password)


# Webhook URLs carry their secret in the path: the last segment of a Slack hook (the workspace
# and channel ids before it stay), the token after a Discord hook's id, the segment after a
# Teams hook's "IncomingWebhook/".
_SLACK_WEBHOOK = re.compile(
    r"hooks\.slack\.com/(?:services|workflows|triggers)/(?:[A-Za-z0-9]+/){1,4}"
    r"(?P<secret>[A-Za-z0-9]{16,})"
)
_DISCORD_WEBHOOK = re.compile(r"/api/webhooks/[0-9]{5,25}/(?P<secret>[A-Za-z0-9_-]{30,})")
_TEAMS_WEBHOOK = re.compile(r"/IncomingWebhook/(?P<secret>[0-9a-fA-F]{32})(?![A-Za-z0-9])")


def _path_secret_replace(m: re.Match[str]) -> str:
    """A path segment that is random (not a placeholder such as XXXX, not a name)."""
    secret = m.group("secret")
    if is_placeholder(secret) or not looks_like_credential(secret):
        return m.group(0)
    return _hide_group(m, "secret")


# Authorization headers: the header name and the scheme stay, the credentials go. "=" only
# without spaces or before a quote: "authorization = request.headers[...]" is code.
_AUTH_HEADER = re.compile(
    r"(?i:(?:proxy-)?authorization)(?:\\?[\"'])?(?:[ \t]*:[ \t]*|=|[ \t]*=[ \t]*(?=\\?[\"']))"
    r"(?:\\?[\"'])?[ \t]*"
    r"(?:(?P<scheme>(?i:bearer|basic|token|bot|digest|negotiate|ntlm|apikey|api-key|sso-key))[ \t]+)?"
    r"(?P<cred>[^\s\"'`\\,;]+)"
)
_BEARER = re.compile(r"(?i:bearer)[ \t]+(?P<scheme>)(?P<cred>[A-Za-z0-9._~+/=-]{16,})")
# "Authorization: Bearer header", "requires Authorization: Bearer.": prose about a header;
# "Authorization: TOKEN}", "authorization: Optional[str]": code naming the value.
_PROSE_WORD_RE = re.compile(r"(?:[A-Z]?[a-z]{1,15}|[A-Z]{1,15})[.:)}\]]*")
_CODE_RE = re.compile(r"[A-Za-z_][\w.]*[(\[{)}\]].*")


def _credential_replace(m: re.Match[str]) -> str:
    cred = m.group("cred")
    if not _starts_token(m.string, m.start()) or is_placeholder(cred) or _CODE_RE.fullmatch(cred):
        return m.group(0)
    if m.group("scheme") and _PROSE_WORD_RE.fullmatch(cred):
        return m.group(0)
    if not m.group("scheme") and not looks_like_credential(cred):
        return m.group(0)  # without a scheme, only a random-looking value is a credential
    return _hide_group(m, "cred")


_JWT = re.compile(_after_boundary("eyJ") + r"[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")
# Telegram: bot<id>:<secret> anywhere; a bare <id>:<secret> only with the usual "AA" start.
_TELEGRAM_BOT = re.compile(
    _after_boundary("bot") + r"\d{6,12}:(?P<tok>[A-Za-z0-9_-]{30,40})(?![A-Za-z0-9_-])"
)
# A leading look-behind is affordable here: the pass only runs on text holding ":AA".
_TELEGRAM_BARE = re.compile(
    r"(?:(?<![A-Za-z0-9_:])|(?<=\\[nrt])|(?<=\\u[0-9A-Fa-f]{4}))"
    r"\d{6,12}:(?P<tok>AA[A-Za-z0-9_-]{30,40})(?![A-Za-z0-9_-])"
)
# In a text that names Telegram, <bot id>:<35 characters> is a bot token whatever it starts
# with (TELEGRAM=123456789:..., "telegram_bot": "..."); the pass runs only on such texts.
_TELEGRAM_NAMED = re.compile(
    r"(?:(?<![A-Za-z0-9_:])|(?<=\\[nrt])|(?<=\\u[0-9A-Fa-f]{4}))"
    r"\d{5,16}:(?P<tok>[A-Za-z0-9_-]{30,40})(?![A-Za-z0-9_-])"
)


def _random_token_replace(m: re.Match[str]) -> str:
    return _hide_group(m, "tok") if looks_like_credential(m.group("tok")) else m.group(0)


# Discord bot tokens: base64 user id, timestamp, HMAC.
_DISCORD = re.compile(
    r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])"
)
# Its middle and the start of its end, a cheap test: it starts with a literal, the token with a class.
_DISCORD_GATE = re.compile(r"\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27}")


def _whole_token(m: re.Match[str]) -> str:
    return MARKER if _starts_token(m.string, m.start(), "-.") else m.group(0)


# Mailchimp API keys: 32 hex digits, then the data center (-us14), which stays. The key comes
# before the literal, so a literal-led gate finds the data center first.
_MAILCHIMP = re.compile(
    r"(?:(?<![A-Za-z0-9_-])|(?<=\\[nrt])|(?<=\\u[0-9A-Fa-f]{4}))"
    r"(?P<key>[0-9a-f]{32})-us[0-9]{1,2}(?![A-Za-z0-9])"
)
_MAILCHIMP_GATE = re.compile(r"-us[0-9]{1,2}(?![A-Za-z0-9])")

# PuTTY key files: the base64 lines after "Private-Lines: N" are the private key.
_NEWLINE = r"(?:\r?\n|\\(?:r\\)?n)"  # "\n" in JSON-escaped text too
_PUTTY_LINE = r"[A-Za-z0-9+/=]{4,}+(?=[\r\n\\\"']|$)"  # a whole line: not Private-MAC's start
_PUTTY_PRIVATE = re.compile(
    rf"Private-Lines:[ \t]*[0-9]+{_NEWLINE}(?P<body>{_PUTTY_LINE}(?:{_NEWLINE}{_PUTTY_LINE})*+)"
)


# Cookie and Set-Cookie headers: each cookie's value (a session id) goes; names and attributes
# stay. "the Set-Cookie: header" names no cookie and is left alone.
_COOKIE_HEADER = re.compile(r"(?i:(?:set-)?cookie)[ \t]*:[ \t]*(?P<pairs>[^\r\n\"'\\`]+)")
_COOKIE_PAIR = re.compile(r"(?P<name>[^=;,\s]+)=(?P<value>[^;,\s]*)")
_COOKIE_ATTRIBUTES = frozenset(
    {"path", "domain", "expires", "max-age", "samesite", "secure", "httponly", "priority"}
)


def _cookie_replace(m: re.Match[str]) -> str:
    if not _starts_token(m.string, m.start(), "-"):
        return m.group(0)
    pairs = _COOKIE_PAIR.sub(_cookie_pair_replace, m.group("pairs"))
    return m.group(0)[: m.start("pairs") - m.start()] + pairs


def _cookie_pair_replace(p: re.Match[str]) -> str:
    value = p.group("value")
    if p.group("name").lower() in _COOKIE_ATTRIBUTES or not value or is_placeholder(value):
        return p.group(0)
    return _hide_group(p, "value")


# ~/.netrc: machine HOST [login USER] password SECRET, on one line or several.
_NETRC = re.compile(
    r"machine\s+\S+(?:\s+(?:login|account)\s+\S+)*\s+password\s+(?P<value>[^\s\"'\\]+)"
)


# ---------------------------------------------------------------------------------------------
# Query parameters, form bodies, command-line flags.

# Names that are secret in a query string whatever their value looks like.
_PARAM_NAMES = frozenset(
    {
        "access_token",
        "refresh_token",
        "id_token",
        "token",
        "code",
        "signature",
        "sig",
        "key",
        "api_key",
        "apikey",
        "api-key",
        "secret",
        "client_secret",
        "password",
        "passwd",
        "pwd",
        "pass",
        "auth",
        "jwt",
        "session",
        "sessionid",
        "session_id",
        "private_token",
        "access_key",
        "secret_key",
        "x-amz-signature",
        "x-amz-credential",
        "x-amz-security-token",
        "x-goog-signature",
        "x-goog-credential",
        "x-goog-security-token",
        "sv_sig",
        "oauth_token",
        "oauth_signature",
        "otp",
    }
)
_PARAM_VALUE = r"(?P<value>[^&#\s\"'<>\\`]+)"
_QUERY_PARAM = re.compile(rf"[?&](?:amp;)?(?P<name>[A-Za-z0-9_.-]{{1,64}})={_PARAM_VALUE}")
# A parameter is a name=value pair: a text without "=" holds none (most questions with "?").
_HAS_PAIR = re.compile("=")
# The first pair of a form body (client_secret=…&code=…) has no "?" or "&" before it.
_FORM_HEAD = re.compile(
    rf"(?P<name>[A-Za-z0-9_.-]{{1,64}})={_PARAM_VALUE}(?=&[A-Za-z0-9_.-]{{1,64}}=)"
)


# Only text with a "name=value&name=" shape pays for the form-body pattern.
_FORM_GATE = re.compile(r"=[^&\s=]*&[A-Za-z0-9_.-]{1,64}=")


def _param_replace(m: re.Match[str]) -> str:
    name, value = m.group("name"), m.group("value")
    if name.lower() not in _PARAM_NAMES and not is_secret_name(name):
        return m.group(0)
    # "(see https://x/cb?code=abc)." : the closing punctuation belongs to the sentence.
    core = value.rstrip(")]}.,;:!?")
    if is_placeholder(value) or is_placeholder(core) or not any(c.isalnum() for c in core):
        return m.group(0)
    head = m.group(0)[: m.start("value") - m.start()]
    return head + MARKER + value[len(core) :]


def _form_head_replace(m: re.Match[str]) -> str:
    if not _starts_token(m.string, m.start(), ".%&?/=-"):
        return m.group(0)
    return _param_replace(m)


# --password hunter2, --api-key=…; a flag's value never starts with "-" (that is the next flag).
_CLI_FLAG = re.compile(
    _after_boundary("--") + r"(?P<name>[A-Za-z0-9][A-Za-z0-9-]{0,40})(?P<sep>=|[ \t]+)"
    r"(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"'\\,;-][^\s\"'\\,;]*)"
)
# A flag's name replaced above is a secret name, and every secret name (``is_secret_name``)
# holds one of the assignment pass's words (key, token, secret, passw, pwd, credential,
# passphrase): the pass is screened by those words, then by "--" (in most texts with "--",
# diffs, git's and every CLI's options, no flag names a secret).
_DOUBLE_DASH = re.compile("--")
# curl's -u user:password (date -u, sort -u and friends take no credentials).
_CURL_USER = re.compile(
    r"curl\b[^\n|;&]{0,300}?[ \t](?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<pw>[^\s\"'\\]+)"
)


def _flag_replace(m: re.Match[str]) -> str:
    name = m.group("name")
    if name.startswith("no-") or not is_secret_name(name):
        return m.group(0)
    inner, quote = unquote(m.group("value"))
    if is_placeholder(inner):
        return m.group(0)
    if m.group("sep") != "=" and not quote and not looks_like_credential(inner):
        return m.group(0)  # "--password options" in prose; --password hunter2025 is a value
    return _hide_value(m)


def _curl_user_replace(m: re.Match[str]) -> str:
    if _is_example_password(m.group("pw")):
        return m.group(0)
    return _hide_group(m, "pw")


# ---------------------------------------------------------------------------------------------
# NAME=value, "name": "value", name: value, 'name' => 'value' (env files, JSON, YAML, code).
# Found from the secret word outwards: scanning every position for a name would be slow.

SECRET_WORDS = ("key", "token", "secret", "passw", "pwd", "credential", "passphrase")
_SECRET_WORD = re.compile("|".join(SECRET_WORDS), re.IGNORECASE)
_NAME_CHARS = frozenset(_TOKEN_CHARS | set(".-"))
_NAME_RUN = re.compile(r"[A-Za-z0-9_.-]*")
_ASSIGNMENT = re.compile(
    r"(?P<nq>\\?[\"']?)(?P<name>[A-Za-z_][A-Za-z0-9_.-]{0,120})(?P=nq)"
    r"(?P<sep>[ \t]*(?:=>|=(?!=)|:(?![:=]))[ \t]*)"
    r"(?P<value>\\\"(?:[^\"\\\n]|\\[^\"\n])*\\\"|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'"
    # A bare value runs over letters (any script: pässwort), digits and ASCII symbols up to a
    # space, quote, bracket, separator or other punctuation; a marker inside it
    # (sk-proj-[REDACTED]) belongs to it.
    r"|(?:[\w!#$%*+\-./:=?@^|~]|\[REDACTED[^\]\n]{0,40}\])+)"
)


def _secret_word_positions(text: str) -> list[int]:
    """Where a secret word starts, in order; str.find is far faster than an alternation."""
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower-case to two: positions would shift
        return [m.start() for m in _SECRET_WORD.finditer(text)]
    positions: set[int] = set()
    for word in SECRET_WORDS:
        i = lowered.find(word)
        while i >= 0:
            positions.add(i)
            i = lowered.find(word, i + 1)
    return sorted(positions)


def _redact_assignments(text: str) -> tuple[str, int]:
    out: list[str] = []
    pos = count = 0  # text[:pos] is settled
    seen = 0  # words before this were examined already, as part of a name or a value
    for hit in _secret_word_positions(text):
        if hit < seen:
            continue
        start, end = _name_start(text, hit), _name_end(text, hit)
        seen = end
        # The cheap name check comes first: only a secret name pays for scanning its value.
        if start < pos or not name_strength(text[start:end]):
            continue
        m = _assignment_at(text, start)
        if m is None:
            continue
        seen = max(seen, m.end())
        new = _assignment_replace(m)
        if new != m.group(0):
            out.append(text[pos : m.start()])
            out.append(new)
            pos, count = m.end(), count + 1
    if not count:
        return text, 0
    out.append(text[pos:])
    return "".join(out), count


def _name_end(text: str, i: int) -> int:
    m = _NAME_RUN.match(text, i)
    return m.end() if m else i


def _name_start(text: str, i: int) -> int:
    """Where the name holding the secret word at ``i`` begins."""
    floor = max(0, i - 120)
    while i > floor and text[i - 1] in _NAME_CHARS:
        i -= 1
    if i >= 1 and text[i - 1] == "\\":  # JSON-escaped text: "\nPASSWORD=…", "\u5bc6TOKEN=…"
        i += 5 if _UNICODE_ESCAPE.match(text, i) else 1 if text[i] in "nrt" else 0
    while i < len(text) and text[i] in "0123456789.-":
        i += 1  # --api-key=…, 2.token
    return i


def _assignment_at(text: str, start: int) -> re.Match[str] | None:
    """The assignment whose name starts at ``start``, its name quoted or bare."""
    for quote in QUOTES:
        qstart = start - len(quote)
        if qstart >= 0 and text.startswith(quote, qstart) and _name_may_start(text, qstart):
            m = _ASSIGNMENT.match(text, qstart)
            if m is not None and m.group("nq"):
                return m
    return _ASSIGNMENT.match(text, start) if _name_may_start(text, start) else None


def _name_may_start(text: str, i: int) -> bool:
    return i == 0 or text[i - 1] != "$"  # $API_KEY is a reference to the value, not the value


def _assignment_replace(m: re.Match[str]) -> str:
    text, end = m.string, m.end()
    found = Assignment(
        name=m.group("name"),
        sep=m.group("sep"),
        raw=m.group("value"),
        following=text[end] if end < len(text) else "",
        line_start=_opens_line(text, m.start()),
        line_end=_LINE_TAIL.match(text, end) is not None,
    )
    return _hide_value(m) if is_secret_value(found) else m.group(0)


# What may stand before a name that opens its line (indentation, a list dash, export) and
# after a value that ends it (spaces, a comment); "\n" is a newline in JSON-escaped text.
_LINE_HEAD = re.compile(r"[ \t]*(?:-[ \t]+|export[ \t]+|#[ \t]*)?")
_LINE_TAIL = re.compile(r"[ \t]*(?:#[^\n]*)?(?:$|\r?\n|\\[nr])", re.MULTILINE)


def _opens_line(text: str, i: int) -> bool:
    """Whether only indentation (or a list dash, export) stands between a line start and ``i``.

    The look-back is bounded: a name 200 characters into a line does not open it, and an
    unbounded search would make a long single-line text quadratic.
    """
    floor = max(0, i - 200)
    newline, escaped = text.rfind("\n", floor, i), text.rfind("\\n", floor, i)
    if newline < 0 and escaped < 0:
        start = 0 if floor == 0 else -1
    else:
        start = max(newline + 1, escaped + 2 if escaped >= 0 else 0)
    return start >= 0 and _LINE_HEAD.fullmatch(text, start, i) is not None


PASSES: tuple[Pass, ...] = (
    _regex_pass(_PEM, _pem_replace, "private key"),
    _regex_pass(
        _PUTTY_PRIVATE, lambda m: _hide_group(m, "body", PRIVATE_KEY_MARKER), "private-lines:"
    ),
    *(_vendor_pass(token) for token in VENDOR_TOKENS),
    _regex_pass(_JWT, lambda m: MARKER, "eyj"),
    _regex_pass(_URL_USERINFO, _url_password_replace, "://"),
    _regex_pass(_SLACK_WEBHOOK, _path_secret_replace, "hooks.slack"),
    _regex_pass(_DISCORD_WEBHOOK, _path_secret_replace, "webhooks/"),
    _regex_pass(_TEAMS_WEBHOOK, _path_secret_replace, "webhook/"),
    _regex_pass(_AUTH_HEADER, _credential_replace, "authorization"),
    _regex_pass(_BEARER, _credential_replace, "bearer"),
    _regex_pass(_TELEGRAM_BOT, lambda m: _hide_group(m, "tok"), "bot"),
    _regex_pass(_TELEGRAM_BARE, lambda m: _hide_group(m, "tok"), ":aa"),
    _regex_pass(_TELEGRAM_NAMED, _random_token_replace, "telegram", "tgram"),
    _regex_pass(_DISCORD, _whole_token, ".", gate=_DISCORD_GATE),
    _regex_pass(_MAILCHIMP, lambda m: _hide_group(m, "key"), "-us", gate=_MAILCHIMP_GATE),
    _regex_pass(_COOKIE_HEADER, _cookie_replace, "cookie"),
    _regex_pass(_NETRC, lambda m: _hide_group(m, "value"), "machine"),
    _regex_pass(_QUERY_PARAM, _param_replace, "?", "&", gate=_HAS_PAIR),
    _regex_pass(_FORM_HEAD, _form_head_replace, "&", gate=_FORM_GATE),
    _regex_pass(_CURL_USER, _curl_user_replace, "curl"),
    _regex_pass(_CLI_FLAG, _flag_replace, *SECRET_WORDS, gate=_DOUBLE_DASH),
    Pass(SECRET_WORDS, _redact_assignments),
)
