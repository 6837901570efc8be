"""Offline validation of the Kubernetes manifests under deploy/k8s.

Every object is checked against the Kubernetes JSON schemas that the kubernetes-validate wheel
ships (strict: unknown fields are errors) for the oldest and newest versions we claim, the
kustomization is rendered with `kubectl kustomize` when kubectl is installed (it needs no
cluster), and the manifests are cross-checked against our CLI, settings and Dockerfile.
"""

from __future__ import annotations

import copy
import ipaddress
import shutil
import subprocess
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]  # no stubs or py.typed
import pytest
import yaml

from tests.deploy.dockerfile import parse_dockerfile
from tests.deploy.files import (
    COMPONENT_COMMANDS,
    DOCKERFILE,
    K8S,
    KUSTOMIZATION,
    SETTINGS_ENV_NAMES,
    Manifest,
    image_tag,
    k8s_manifests,
    load_yaml_documents,
    parse_component_args,
    project_version,
    workloads,
)
from worker.callback_targets import refused_kind
from worker.settings import Settings

# The oldest Kubernetes we support (policy/v1, autoscaling/v2, batch/v1 ttl all GA) and the
# newest the schemas cover.
KUBERNETES_VERSIONS = ("1.29", "1.37")
NAMESPACE = "compaction"
SECRET_TEMPLATE = K8S / "secret.example.yaml"


def manifests() -> list[Manifest]:
    return k8s_manifests()


def find(kind: str, name: str) -> dict[str, Any]:
    (doc,) = [m.doc for m in manifests() if m.kind == kind and m.name == name]
    return doc


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"]
    return [*spec.get("initContainers", []), *spec["containers"]]


def config_data() -> dict[str, str]:
    return dict(find("ConfigMap", "compaction-config")["data"])


def secret_template() -> dict[str, str]:
    (doc,) = load_yaml_documents(SECRET_TEMPLATE)
    return dict(doc["stringData"])


def kustomization() -> dict[str, Any]:
    (doc,) = load_yaml_documents(KUSTOMIZATION)
    return doc


def schema_problem(doc: dict[str, Any], version: str) -> str | None:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        return f"{'/'.join(map(str, exc.absolute_path))}: {exc.message}"
    except kubernetes_validate.SchemaNotFoundError as exc:
        return str(exc.message)
    return None


# --- schemas --------------------------------------------------------------------------------


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("manifest", manifests(), ids=str)
def test_manifest_matches_the_kubernetes_schema(manifest: Manifest, version: str) -> None:
    assert schema_problem(manifest.doc, version) is None


def test_kubernetes_schema_rejects_a_misspelt_field_and_a_wrong_type() -> None:
    doc = copy.deepcopy(find("Deployment", "compaction-api"))
    doc["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    assert "readinesProbe" in str(schema_problem(doc, KUBERNETES_VERSIONS[-1]))
    doc = copy.deepcopy(find("Deployment", "compaction-beat"))
    doc["spec"]["replicas"] = "one"
    assert "'one' is not of type 'integer'" in str(schema_problem(doc, KUBERNETES_VERSIONS[-1]))


# --- kustomization --------------------------------------------------------------------------


def test_kustomization_lists_every_manifest_except_templates_and_optional_ones() -> None:
    listed = set(kustomization()["resources"])
    on_disk = {p.relative_to(K8S).as_posix() for p in K8S.glob("*.yaml")}
    assert listed == on_disk - {"kustomization.yaml", "secret.example.yaml"}
    # Applying placeholders over the real Secret would take production down.
    assert "secret.example.yaml" not in listed
    assert kustomization()["namespace"] == NAMESPACE


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_kustomize_renders_valid_objects_in_one_namespace_with_the_release_image() -> None:
    rendered = subprocess.run(
        ["kubectl", "kustomize", str(K8S)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    docs = [d for d in yaml.safe_load_all(rendered) if d]
    assert len(docs) == sum(1 for m in manifests() if m.path.parent == K8S and m.kind != "Secret")
    (image,) = {kustomization()["images"][0]["newName"]}
    for doc in docs:
        assert schema_problem(doc, KUBERNETES_VERSIONS[-1]) is None, doc["metadata"]["name"]
        if doc["kind"] != "Namespace":
            assert doc["metadata"]["namespace"] == NAMESPACE
        assert doc["metadata"]["labels"]["app.kubernetes.io/part-of"] == "compaction-queue"
        if "template" in doc.get("spec", {}):
            for container in containers(doc):
                assert container["image"] == f"{image}:{project_version()}"


def test_images_are_our_image_tagged_with_the_project_version() -> None:
    (entry,) = kustomization()["images"]
    assert entry["newTag"] == project_version()
    labels = kustomization()["labels"][0]["pairs"]
    assert labels["app.kubernetes.io/version"] == project_version()
    for manifest, _ in workloads(manifests()):
        for container in containers(manifest.doc):
            assert image_tag(container["image"]) == (entry["name"], project_version())


# --- cross-checks with the CLI, settings and the Dockerfile ----------------------------------


def test_every_workload_runs_one_of_our_cli_components() -> None:
    commands = {}
    for manifest, _ in workloads(manifests()):
        if manifest.kind == "HorizontalPodAutoscaler":
            continue
        (container,) = containers(manifest.doc)
        assert "command" not in container, f"{manifest}: keep the image's entrypoint"
        commands[manifest.name] = container["args"][0]
        if len(container["args"]) > 1:
            parse_component_args(container["args"])  # its options exist
    assert set(commands.values()) == COMPONENT_COMMANDS
    assert all(name == f"compaction-{command}" for name, command in commands.items())


def test_worker_liveness_probe_pings_the_node_name_the_worker_is_given() -> None:
    (container,) = containers(find("Deployment", "compaction-worker"))
    (hostname,) = [a.split("=", 1)[1] for a in container["args"] if a.startswith("--hostname=")]
    assert hostname.endswith("@%h")  # Celery expands %h to the pod name
    probe = container["livenessProbe"]["exec"]["command"]
    assert probe[:2] == ["sh", "-c"]
    assert f'--destination "{hostname.replace("%h", "${HOSTNAME}")}"' in probe[2]


def test_every_setting_variable_is_a_field_of_settings() -> None:
    names = set(config_data()) | set(secret_template())
    for manifest, _ in workloads(manifests()):
        for container in containers(manifest.doc):
            names |= {e["name"] for e in container.get("env", [])}
    names = {n for n in names if n.startswith("COMPACTION_")}
    assert names <= SETTINGS_ENV_NAMES, f"not settings: {sorted(names - SETTINGS_ENV_NAMES)}"


def test_config_and_secret_template_values_parse_as_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {**config_data(), **secret_template()}.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    assert settings.api_host == "0.0.0.0" and settings.flower_host == "0.0.0.0"
    assert settings.llm_base_url is None  # empty in the ConfigMap: the extractive summarizer
    assert settings.database_url.startswith("postgresql+psycopg://")
    assert settings.job_soft_time_limit_s < settings.job_hard_time_limit_s
    # A dead worker's job is back long before the reaper would call it stuck (the settings
    # refuse otherwise), and within two minutes.
    assert settings.visibility_timeout_s + settings.lock_ttl_s <= 120


def test_secret_references_exist_in_the_secret_template_which_holds_placeholders() -> None:
    template = secret_template()
    for manifest, _ in workloads(manifests()):
        for container in containers(manifest.doc):
            assert {"configMapRef": {"name": "compaction-config"}} in container["envFrom"]
            for env in container.get("env", []):
                ref = env["valueFrom"]["secretKeyRef"]
                assert ref["name"] == "compaction-secrets" and ref["key"] == env["name"]
                assert ref["key"] in template, f"{manifest}: {ref['key']}"
    for name, value in template.items():
        assert "CHANGE-ME" in value or name == "COMPACTION_FLOWER_USER", name


def test_each_component_gets_only_the_secrets_it_needs() -> None:
    def secrets_of(name: str) -> set[str]:
        (container,) = containers(
            find("Deployment", name) if name != "compaction-migrate" else find("Job", name)
        )
        return {e["name"] for e in container.get("env", [])}

    assert "COMPACTION_API_TOKEN" in secrets_of("compaction-api")
    assert secrets_of("compaction-migrate") == {"COMPACTION_DATABASE_URL"}
    assert "COMPACTION_DATABASE_URL" not in secrets_of("compaction-flower")
    assert {"COMPACTION_FLOWER_USER", "COMPACTION_FLOWER_PASSWORD"} <= secrets_of(
        "compaction-flower"
    )
    for name in ("compaction-api", "compaction-worker", "compaction-beat", "compaction-migrate"):
        assert "COMPACTION_FLOWER_PASSWORD" not in secrets_of(name)


def test_pods_run_as_the_image_user_on_a_read_only_root() -> None:
    (user,) = parse_dockerfile(DOCKERFILE).of("USER", stage=1)
    uid, gid = (int(n) for n in user.value.split(":"))
    for manifest, spec in workloads(manifests()):
        if manifest.kind == "HorizontalPodAutoscaler":
            continue
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and (pod["runAsUser"], pod["runAsGroup"]) == (uid, gid)
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
        assert spec["automountServiceAccountToken"] is False
        volumes = {v["name"]: v for v in spec["volumes"]}
        for container in containers(manifest.doc):
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, manifest
            assert security["allowPrivilegeEscalation"] is False, manifest
            assert security["capabilities"] == {"drop": ["ALL"]}, manifest
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], f"{manifest}: /tmp must be writable"
            resources = container["resources"]
            assert {"cpu", "memory"} <= resources["requests"].keys() and "memory" in resources[
                "limits"
            ]


def test_var_dir_is_a_writable_volume_where_settings_point() -> None:
    var_dir = config_data()["COMPACTION_VAR_DIR"]
    for manifest, spec in workloads(manifests()):
        if manifest.kind != "Deployment":
            continue
        volumes = {v["name"]: v for v in spec["volumes"]}
        (container,) = containers(manifest.doc)
        mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
        assert "emptyDir" in volumes[mounts[var_dir]], manifest


def test_api_probes_and_ports_agree_with_the_settings() -> None:
    api = find("Deployment", "compaction-api")
    (container,) = containers(api)
    (port,) = container["ports"]
    assert port["containerPort"] == int(config_data()["COMPACTION_API_PORT"]) == Settings().api_port
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": port["name"]}
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": port["name"]}
    (service_port,) = find("Service", "compaction-api")["spec"]["ports"]
    assert service_port["targetPort"] == port["name"]


def test_flower_port_and_probe_agree_with_the_settings() -> None:
    (container,) = containers(find("Deployment", "compaction-flower"))
    (port,) = container["ports"]
    assert (
        port["containerPort"]
        == int(config_data()["COMPACTION_FLOWER_PORT"])
        == Settings().flower_port
    )
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthcheck"
    (service_port,) = find("Service", "compaction-flower")["spec"]["ports"]
    assert service_port["targetPort"] == port["name"]


def test_exactly_one_beat_replaced_by_recreate() -> None:
    beat = find("Deployment", "compaction-beat")
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "Recreate"}
    assert not [m for m in manifests() if m.kind == "HorizontalPodAutoscaler" and "beat" in m.name]


def test_worker_grace_period_outlasts_the_job_hard_time_limit() -> None:
    worker = find("Deployment", "compaction-worker")
    grace_s = worker["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    hard_limit_s = int(
        config_data().get("COMPACTION_JOB_HARD_TIME_LIMIT_S", Settings().job_hard_time_limit_s)
    )
    assert grace_s > hard_limit_s
    assert worker["spec"]["replicas"] >= 2
    (container,) = containers(worker)
    assert "preStop" not in container.get("lifecycle", {})  # SIGTERM itself is the warm shutdown


def test_selectors_match_the_pods_they_are_meant_for() -> None:
    pod_labels = {
        m.name: m.doc["spec"]["template"]["metadata"]["labels"] for m, _ in workloads(manifests())
    }

    def selected(selector: dict[str, str]) -> set[str]:
        return {name for name, labels in pod_labels.items() if selector.items() <= labels.items()}

    for manifest, _ in workloads(manifests()):
        if manifest.kind == "Deployment":
            assert selected(manifest.doc["spec"]["selector"]["matchLabels"]) == {manifest.name}
    for kind in ("Service", "PodDisruptionBudget"):
        for manifest in (m for m in manifests() if m.kind == kind):
            selector = manifest.doc["spec"].get("selector", {})
            selector = selector.get("matchLabels", selector)
            assert selected(selector) == {manifest.name}, manifest
    assert {m.name for m in manifests() if m.kind == "PodDisruptionBudget"} == {
        "compaction-api",
        "compaction-worker",
    }


def test_network_policies_select_our_pods_and_open_only_api_flower_and_worker_metrics() -> None:
    policies = [m.doc for m in manifests() if m.kind == "NetworkPolicy"]
    open_to: dict[str, set[str]] = {}
    for policy in policies:
        if policy["spec"]["policyTypes"] == ["Egress"]:
            continue  # the worker's, below
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        labels = policy["spec"]["podSelector"]["matchLabels"]
        assert labels["app.kubernetes.io/name"] == "compaction-queue"
        for rule in policy["spec"].get("ingress", []):
            ports = {p["port"] for p in rule["ports"]}
            open_to.setdefault(labels["app.kubernetes.io/component"], set()).update(ports)
    # A worker listens on nothing but its metrics port, for Prometheus.
    assert open_to == {"api": {"http"}, "flower": {"http"}, "worker": {"metrics"}}


def test_workers_reach_everything_but_the_cloud_metadata_addresses() -> None:
    (policy,) = [
        m.doc for m in manifests()
        if m.kind == "NetworkPolicy" and "Egress" in m.doc["spec"]["policyTypes"]
    ]  # fmt: skip
    labels = policy["spec"]["podSelector"]["matchLabels"]
    assert labels["app.kubernetes.io/component"] == "worker"
    (rule,) = policy["spec"]["egress"]
    assert "ports" not in rule  # every port: PostgreSQL, Redis, the LLM, callbacks, DNS
    blocks = {b["ipBlock"]["cidr"]: set(b["ipBlock"]["except"]) for b in rule["to"]}
    assert set(blocks) == {"0.0.0.0/0", "::/0"}
    excluded = [ipaddress.ip_network(n) for cut in blocks.values() for n in cut]
    for address in ("169.254.169.254", "fd00:ec2::254", "100.100.100.200"):
        ip = ipaddress.ip_address(address)
        assert any(ip in net for net in excluded), address
        assert refused_kind(ip) is not None  # the worker refuses the same addresses itself
    for net in excluded:  # single hosts: node-local DNS caches also live in 169.254.0.0/16
        assert net.num_addresses == 1, net


def test_optional_hpa_scales_the_worker_deployment_only() -> None:
    (hpa,) = [m.doc for m in manifests() if m.kind == "HorizontalPodAutoscaler"]
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "compaction-worker")
    find("Deployment", target["name"])
    assert hpa["spec"]["minReplicas"] >= 2
