"""Offline validation of docker-compose.yml (and of every YAML file under deploy/).

No Docker engine here: the file is checked against the Compose Specification's JSON schema, raw
and after interpolation with the .env template, and cross-checked against our CLI and settings.
Kubernetes: test_deploy_k8s.py; Dockerfile: test_deploy_dockerfile.py.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # stubs are not a dependency
import pytest
import yaml

from tests.deploy.compose import (
    MissingVariableError,
    compose_spec_schema,
    interpolate,
    referenced_variables,
    required_variables,
)
from tests.deploy.files import (
    COMPONENT_COMMANDS,
    COMPOSE,
    COMPOSE_ENV_TEMPLATE,
    ROOT,
    SETTINGS_ENV_NAMES,
    deploy_yaml_files,
    image_tag,
    load_compose,
    load_yaml_documents,
    parse_component_args,
    project_version,
    read_env_file,
)
from worker.settings import Settings

APP_SERVICES = {"migrate", "api", "worker", "beat", "flower"}


def schema_errors(doc: dict[str, Any]) -> list[str]:
    schema = compose_spec_schema()
    validator = jsonschema.validators.validator_for(schema)(schema)
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)
    ]


def template_env() -> dict[str, str]:
    return read_env_file(COMPOSE_ENV_TEMPLATE).values


def services() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = load_compose()["services"]
    return found


def duration_s(text: str) -> float:
    """Compose durations: `1h2m3s`, `90s`, `16m`, `1.5s`."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text)
    assert parts and "".join(n + u for n, u in parts) == text, f"not a duration: {text!r}"
    return sum(float(n) * units[u] for n, u in parts)


def environment(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment", {})
    assert isinstance(env, dict), "use the mapping form of environment"
    return {str(k): str(v) for k, v in env.items()}


def published_container_port(service: dict[str, Any]) -> list[int]:
    return [int(str(p).rsplit(":", 1)[-1].split("/")[0]) for p in service.get("ports", [])]


# --- every YAML file ------------------------------------------------------------------------


@pytest.mark.parametrize("path", deploy_yaml_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_deploy_yaml_file_parses_without_duplicate_keys(path: Path) -> None:
    assert load_yaml_documents(path), f"{path} has no document"


def test_duplicate_keys_are_caught(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: 1\nb: 2\na: 3\n")
    with pytest.raises(yaml.constructor.ConstructorError, match="duplicate key 'a'"):
        load_yaml_documents(bad)


# --- the Compose Specification schema -------------------------------------------------------


def test_compose_file_matches_the_compose_specification_schema() -> None:
    assert schema_errors(load_compose()) == []


def test_compose_file_interpolated_with_the_env_template_matches_the_schema() -> None:
    assert schema_errors(interpolate(load_compose(), template_env())) == []


def test_compose_schema_rejects_a_misspelt_key_and_a_bad_condition() -> None:
    doc = load_compose()
    doc["services"]["api"]["healtcheck"] = {"test": ["CMD", "true"]}
    doc["services"]["worker"]["depends_on"]["migrate"]["condition"] = "service_finished"
    errors = "\n".join(schema_errors(doc))
    assert "healtcheck" in errors
    assert "services/worker/depends_on" in errors


# --- variables and secrets ------------------------------------------------------------------


def test_every_required_compose_variable_is_set_in_the_env_template() -> None:
    required = required_variables(COMPOSE.read_text())
    assert {"POSTGRES_PASSWORD", "REDIS_PASSWORD", "COMPACTION_API_TOKEN"} <= required
    assert required <= template_env().keys()


def test_compose_refuses_to_start_without_its_secrets() -> None:
    with pytest.raises(MissingVariableError, match="POSTGRES_PASSWORD"):
        interpolate(load_compose(), {})


def test_every_compose_variable_is_documented_in_the_env_template() -> None:
    documented = read_env_file(COMPOSE_ENV_TEMPLATE).documented
    assert referenced_variables(COMPOSE.read_text()) <= documented


def test_env_template_holds_placeholders_not_secrets() -> None:
    for name, value in template_env().items():
        if re.search(r"PASSWORD|TOKEN|SECRET|KEY", name):
            assert value == "CHANGE-ME", f"{name} must be a placeholder in the template"


def test_compose_settings_variables_are_fields_of_settings() -> None:
    names = {n for s in services().values() for n in environment(s) if n.startswith("COMPACTION_")}
    names |= {
        n for n in read_env_file(COMPOSE_ENV_TEMPLATE).documented if n.startswith("COMPACTION_")
    }
    assert names, "no COMPACTION_* variable found"
    assert names <= SETTINGS_ENV_NAMES, f"not settings: {sorted(names - SETTINGS_ENV_NAMES)}"


def test_compose_settings_values_parse_as_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = interpolate(load_compose(), template_env())["services"]
    for name in ("api", "worker", "flower"):
        for key, value in environment(resolved[name]).items():
            monkeypatch.setenv(key, value)
    settings = Settings()
    assert settings.database_url.startswith("postgresql+psycopg://")
    assert settings.redis_url is not None and settings.redis_url.startswith("redis://")
    assert settings.api_token is not None


# --- services -------------------------------------------------------------------------------


def test_app_services_run_our_cli_components() -> None:
    commands = {}
    for name in APP_SERVICES:
        command = services()[name]["command"]
        assert isinstance(command, list), f"{name}: use the exec (list) form"
        commands[name] = command[0]
    assert set(commands.values()) == COMPONENT_COMMANDS
    assert all(name == command for name, command in commands.items())
    for name in APP_SERVICES:
        if len(services()[name]["command"]) > 1:
            parse_component_args(services()[name]["command"])  # its options exist


def test_worker_health_check_pings_the_node_name_the_worker_is_given() -> None:
    worker = services()["worker"]
    (hostname,) = [a.split("=", 1)[1] for a in worker["command"] if a.startswith("--hostname=")]
    assert hostname.endswith("@%h")  # Celery expands %h to the container's hostname
    node = hostname.replace("%h", "$$HOSTNAME")
    assert f'--destination "{node}"' in worker["healthcheck"]["test"][1]


def test_app_services_share_one_image_whose_tag_is_the_project_version() -> None:
    images = {services()[name]["image"] for name in APP_SERVICES}
    (image,) = images
    default = interpolate(image, {})
    assert image_tag(default) == ("compaction-queue", project_version())
    for name in APP_SERVICES:
        assert services()[name]["build"]["dockerfile"] == "deploy/Dockerfile"
        assert services()[name]["init"] is True  # docker-init forwards SIGTERM, reaps zombies


def test_services_use_postgresql_with_psycopg_and_the_compose_redis() -> None:
    resolved = interpolate(load_compose(), template_env())["services"]
    database_url = environment(resolved["api"])["COMPACTION_DATABASE_URL"]
    redis_url = environment(resolved["api"])["COMPACTION_REDIS_URL"]
    assert re.fullmatch(
        r"postgresql\+psycopg://compaction:[^@]+@postgres:5432/compaction", database_url
    )
    assert re.fullmatch(r"redis://:[^@]+@redis:6379/0", redis_url)
    postgres_env = environment(resolved["postgres"])
    assert postgres_env["POSTGRES_USER"] == "compaction" == postgres_env["POSTGRES_DB"]
    for name in APP_SERVICES - {"migrate"}:
        assert environment(resolved[name])["COMPACTION_REDIS_URL"] == redis_url
    for name in APP_SERVICES - {"flower"}:
        assert environment(resolved[name])["COMPACTION_DATABASE_URL"] == database_url


def test_postgres_and_redis_are_durable_and_health_checked() -> None:
    postgres, redis = services()["postgres"], services()["redis"]
    volumes = load_compose()["volumes"]
    assert "pgdata:/var/lib/postgresql/data" in postgres["volumes"]
    assert "redisdata:/data" in redis["volumes"]
    assert {"pgdata", "redisdata"} <= volumes.keys()
    command = redis["command"]
    assert command[command.index("--appendonly") + 1] == "yes"
    # A broker that evicts keys loses queued jobs and locks without an error.
    assert command[command.index("--maxmemory-policy") + 1] == "noeviction"
    assert "pg_isready" in postgres["healthcheck"]["test"][1]
    assert "redis-cli ping" in redis["healthcheck"]["test"][1]
    for image in (postgres["image"], redis["image"]):
        assert re.search(r":\d+\.\d+", image), f"{image}: pin a version"


def test_dependents_wait_for_health_and_for_migrations() -> None:
    all_services = services()
    for name, service in all_services.items():
        for dependency, rule in service.get("depends_on", {}).items():
            condition = rule["condition"]
            if dependency == "migrate":
                assert condition == "service_completed_successfully", name
            else:
                assert condition == "service_healthy", f"{name} -> {dependency}"
                assert not all_services[dependency].get("healthcheck", {}).get("disable")
    assert services()["migrate"]["depends_on"] == {"postgres": {"condition": "service_healthy"}}
    assert services()["migrate"]["restart"] == "no"
    for name in ("api", "worker", "beat"):
        assert "migrate" in services()[name]["depends_on"], name


def test_exactly_one_beat_and_scalable_workers() -> None:
    beat, worker = services()["beat"], services()["worker"]
    assert beat["deploy"]["replicas"] == 1
    assert worker["deploy"]["replicas"] >= 2
    # `--scale worker=N` needs no fixed container name and no published port.
    assert "container_name" not in worker and "ports" not in worker


def test_worker_stop_grace_period_exceeds_the_job_hard_time_limit() -> None:
    grace_s = duration_s(services()["worker"]["stop_grace_period"])
    defaults = Settings()
    assert grace_s > defaults.job_hard_time_limit_s > defaults.job_soft_time_limit_s


def test_published_ports_and_health_checks_match_the_settings() -> None:
    defaults = Settings()
    api, flower = services()["api"], services()["flower"]
    assert published_container_port(api) == [defaults.api_port]
    assert published_container_port(flower) == [defaults.flower_port]
    # Flower is for operators: the host's loopback only, never every interface.
    assert all(str(p).startswith("127.0.0.1:") for p in flower["ports"])
    assert f"127.0.0.1:{defaults.api_port}/healthz" in " ".join(api["healthcheck"]["test"])
    assert f"127.0.0.1:{defaults.flower_port}/healthcheck" in " ".join(
        flower["healthcheck"]["test"]
    )
    for name in APP_SERVICES - {"api", "flower"}:
        assert "ports" not in services()[name], name


def test_flower_requires_basic_auth_credentials() -> None:
    flower_env = environment(services()["flower"])
    for name in ("COMPACTION_FLOWER_USER", "COMPACTION_FLOWER_PASSWORD"):
        assert name in required_variables(flower_env[name]), f"{name} must be required"


# --- docs -----------------------------------------------------------------------------------


def test_deploy_docs_name_only_files_that_exist() -> None:
    text = (ROOT / "docs" / "deploy.md").read_text()
    paths = set(re.findall(r"`((?:deploy/|docker-compose\.yml)[\w./-]*)`", text))
    assert {"deploy/Dockerfile", "docker-compose.yml", "deploy/k8s/"} <= paths
    assert [p for p in paths if not (ROOT / p).exists()] == []
