"""Where the deployment files are, and strict YAML/env-file loading for them."""

from __future__ import annotations

import argparse
import importlib
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from api.cli import COMMANDS
from worker.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = ROOT / "docker-compose.yml"
COMPOSE_ENV_TEMPLATE = DEPLOY / "compose.env.example"
KUSTOMIZATION = K8S / "kustomization.yaml"

# What the containers run: one component each (DESIGN.md, "CLI").
COMPONENT_COMMANDS = frozenset({"api", "worker", "beat", "flower", "migrate"})
assert COMMANDS.keys() >= COMPONENT_COMMANDS


def parse_component_args(argv: list[str]) -> None:
    """Parse `compaction <component> [options]` with that command's own parser (SystemExit if
    an option is unknown), without running it."""
    command, *options = argv
    assert command in COMPONENT_COMMANDS, command
    parser = argparse.ArgumentParser(prog=f"compaction {command}", allow_abbrev=False)
    importlib.import_module(f"api.commands.{command}").add_arguments(parser)
    parser.parse_args(options)


SETTINGS_ENV_NAMES = frozenset(f"COMPACTION_{name.upper()}" for name in Settings.model_fields)


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently; a deploy file must not have any."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor` is a merge, not a key
        key = loader.construct_object(key_node, deep=True)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    loader.flatten_mapping(node)
    return dict(loader.construct_pairs(node, deep=True))


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


def load_yaml_documents(path: Path) -> list[dict[str, Any]]:
    """Every non-empty document of a YAML file, each a mapping; duplicate keys are an error."""
    with path.open(encoding="utf-8") as fh:
        docs = [doc for doc in yaml.load_all(fh, Loader=_UniqueKeyLoader) if doc is not None]
    for doc in docs:
        if not isinstance(doc, dict):
            raise TypeError(f"{path}: a document is a {type(doc).__name__}, not a mapping")
    return docs


def load_compose() -> dict[str, Any]:
    (doc,) = load_yaml_documents(COMPOSE)
    return doc


def deploy_yaml_files() -> list[Path]:
    return sorted([*DEPLOY.rglob("*.yaml"), *DEPLOY.rglob("*.yml"), COMPOSE])


@dataclass(frozen=True)
class Manifest:
    path: Path
    doc: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.doc["kind"])

    @property
    def name(self) -> str:
        return str(self.doc["metadata"]["name"])

    def __str__(self) -> str:
        return f"{self.path.relative_to(K8S)}: {self.kind}/{self.name}"


def k8s_manifests() -> list[Manifest]:
    """Every Kubernetes object under deploy/k8s (templates and optional ones included)."""
    return [
        Manifest(path, doc)
        for path in sorted(K8S.rglob("*.yaml"))
        if path != KUSTOMIZATION
        for doc in load_yaml_documents(path)
    ]


def pod_spec(doc: dict[str, Any]) -> dict[str, Any] | None:
    """The pod template's spec of a workload (Deployment, Job…), else None."""
    template = doc.get("spec", {}).get("template")
    return None if template is None else dict(template["spec"])


def workloads(manifests: list[Manifest]) -> Iterator[tuple[Manifest, dict[str, Any]]]:
    for manifest in manifests:
        spec = pod_spec(manifest.doc)
        if spec is not None:
            yield manifest, spec


@dataclass(frozen=True)
class EnvFile:
    values: dict[str, str]  # uncommented NAME=value lines
    documented: frozenset[str]  # names on commented-out lines too


_ENV_LINE = re.compile(r"^(?P<comment>#\s*)?(?P<name>[A-Z][A-Z0-9_]*)=(?P<value>.*)$")


def read_env_file(path: Path) -> EnvFile:
    values: dict[str, str] = {}
    documented: set[str] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _ENV_LINE.match(line.strip())
        if match is None:
            continue
        documented.add(match["name"])
        if not match["comment"]:
            values[match["name"]] = match["value"]
    return EnvFile(values, frozenset(documented))


def locked_version(package: str) -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text(encoding="utf-8"))
    (version,) = [p["version"] for p in lock["package"] if p["name"] == package]
    return str(version)


def project_version() -> str:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return str(project["project"]["version"])


def image_tag(image: str) -> tuple[str, str]:
    """`name[:tag]` -> (name, tag); a registry host with a port keeps its colon."""
    name, _, tag = image.rpartition(":")
    if not name or "/" in tag:
        return image, ""
    return name, tag
