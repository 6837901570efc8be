"""Offline validation of deploy/observability/: the alert rules, the Grafana dashboard, the scrape
configs, and the scrape settings in docker-compose.yml and deploy/k8s.

The important check is the cross-check: every metric an alert or a panel reads is one that the
API's or a worker's registry exports (a renamed metric would otherwise leave an alert that never
fires), and every exported metric is described in docs/operations.md. ``promtool`` checks the
rules and the compose scrape config too when it is installed (Debian's `prometheus` package).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.metrics import ApiMetrics
from tests.deploy.files import DEPLOY, K8S, ROOT, load_compose, load_yaml_documents
from tests.deploy.promql import metric_names
from worker.metrics import make_metrics
from worker.settings import Settings
from worker.store.models import OPEN_JOB_STATUSES
from worker.store.stats import OpenJobs

OBSERVABILITY = DEPLOY / "observability"
ALERTS = OBSERVABILITY / "alerts.yml"
DASHBOARD = OBSERVABILITY / "grafana-dashboard.json"
PROMETHEUS = OBSERVABILITY / "prometheus.yml"
PROMETHEUS_K8S = OBSERVABILITY / "prometheus-kubernetes.yml"
OPERATIONS = ROOT / "docs" / "operations.md"

# Series Prometheus makes itself for every target.
PROMETHEUS_OWN = frozenset({"up", "scrape_duration_seconds", "scrape_samples_scraped"})
SEVERITIES = frozenset({"critical", "warning", "info"})
SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "gauge": ("",),
}
WORKER_PORT = 9540


def families() -> list[tuple[str, str]]:
    """(name, type) of every family the API and a worker export."""
    api = ApiMetrics(lambda: dict.fromkeys(OPEN_JOB_STATUSES, OpenJobs(0, None)))
    worker = make_metrics()
    return [(f.name, f.type) for r in (api.registry, worker.registry) for f in r.collect()]


def exported_series() -> set[str]:
    return {name + suffix for name, kind in families() for suffix in SUFFIXES[kind]}


def alert_rules() -> list[dict[str, Any]]:
    (doc,) = load_yaml_documents(ALERTS)
    return [rule for group in doc["groups"] for rule in group["rules"]]


def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return loaded


def panels(container: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in container.get("panels", []):
        yield panel
        yield from panels(panel)  # a collapsed row holds its panels


def heading_anchors(markdown: str) -> set[str]:
    """GitHub's anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", markdown, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


# --- the cross-check --------------------------------------------------------------------------


def test_the_metric_name_finder_sees_through_promql() -> None:
    expr = (
        'histogram_quantile(0.95, sum by (le, route) (rate(a_bucket{route!~"x|y"}[5m]))) '
        "/ on (job) group_left sum without (pod) (b_total offset 1h) > 1e-3 "
        'and up{job="w"} == bool 0 or vector(0) * c[$__rate_interval:1m]'
    )
    assert metric_names(expr) == {"a_bucket", "b_total", "up", "c"}


def test_every_alert_reads_only_metrics_we_export() -> None:
    known = exported_series() | PROMETHEUS_OWN
    for rule in alert_rules():
        names = metric_names(rule["expr"])
        assert names, rule["alert"]
        assert names <= known, (rule["alert"], names - known)


def test_every_dashboard_panel_reads_only_metrics_we_export() -> None:
    known = exported_series() | PROMETHEUS_OWN
    queried = 0
    for panel in panels(dashboard()):
        if panel["type"] == "row":
            continue
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            names = metric_names(target["expr"])
            assert names and names <= known, (panel["title"], names - known)
            queried += 1
    assert queried >= 20


def test_the_dashboard_and_the_alerts_cover_what_operators_alert_on() -> None:
    read = {n for r in alert_rules() for n in metric_names(r["expr"])}
    shown = {n for p in panels(dashboard()) for t in p.get("targets", []) for n in metric_names(t["expr"])}  # fmt: skip
    for name in (
        "compaction_worker_fallbacks_total",
        "compaction_worker_dropped_messages_total",
        "compaction_worker_queue_wait_seconds_bucket",
        "compaction_oldest_open_job_age_seconds",
        "compaction_reaper_failed_stuck_total",
        "compaction_callback_attempts_total",
        "compaction_worker_lock_busy_total",
        "compaction_api_jobs_unqueued_total",
    ):
        assert name in read and name in shown, name
    # Every family shows on the dashboard somewhere.
    for family, kind in families():
        assert any(family + s in shown for s in SUFFIXES[kind]), family


def test_every_exported_metric_is_described_for_operators() -> None:
    text = OPERATIONS.read_text(encoding="utf-8")
    for name, kind in families():
        shown = name + ("_total" if kind == "counter" else "")  # a histogram by its own name
        assert f"`{shown}`" in text, f"docs/operations.md does not describe {shown}"


# --- alert rules ----------------------------------------------------------------------------------


def test_alert_rules_have_the_fields_prometheus_and_operators_need() -> None:
    (doc,) = load_yaml_documents(ALERTS)
    assert set(doc) == {"groups"}
    anchors = heading_anchors(OPERATIONS.read_text(encoding="utf-8"))
    names = []
    for group in doc["groups"]:
        assert set(group) <= {"name", "interval", "rules"} and group["rules"], group
        for rule in group["rules"]:
            assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
            assert re.fullmatch(r"Compaction[A-Z][A-Za-z]+", rule["alert"])
            assert re.fullmatch(r"\d+[smh]", rule["for"]), rule["alert"]
            assert rule["labels"]["severity"] in SEVERITIES
            notes = rule["annotations"]
            assert {"summary", "description", "runbook_url"} <= set(notes), rule["alert"]
            page, _, anchor = notes["runbook_url"].partition("#")
            assert page == "docs/operations.md" and anchor == rule["alert"].lower()
            assert anchor in anchors, f"docs/operations.md has no section {rule['alert']}"
            names.append(rule["alert"])
    assert len(names) == len(set(names))


@pytest.mark.skipif(shutil.which("promtool") is None, reason="promtool is not installed")
def test_promtool_accepts_the_rules_and_the_compose_scrape_config() -> None:
    for args in (["check", "rules", str(ALERTS)], ["check", "config", str(PROMETHEUS)]):
        done = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr


# --- dashboard ------------------------------------------------------------------------------------


def test_dashboard_is_importable_grafana_json() -> None:
    board = dashboard()
    assert {"title", "uid", "schemaVersion", "panels", "templating"} <= set(board)
    (variable,) = board["templating"]["list"]
    assert (variable["type"], variable["query"], variable["name"]) == (
        "datasource",
        "prometheus",
        "datasource",
    )
    ids = [p["id"] for p in panels(board)]
    assert len(ids) == len(set(ids))
    for panel in panels(board):
        grid = panel["gridPos"]
        assert grid["x"] + grid["w"] <= 24 and grid["h"] > 0, panel["title"]
        if panel["type"] != "row":
            assert panel["datasource"]["uid"] == "${datasource}", panel["title"]
            refs = [t["refId"] for t in panel["targets"]]
            assert len(refs) == len(set(refs)), panel["title"]


# --- where Prometheus finds the metrics -----------------------------------------------------------


def scrape_jobs(path: Path) -> dict[str, dict[str, Any]]:
    (doc,) = load_yaml_documents(path)
    return {job["job_name"]: job for job in doc["scrape_configs"]}


def test_compose_workers_serve_metrics_where_the_compose_prometheus_scrapes() -> None:
    services = load_compose()["services"]
    worker_env = services["worker"]["environment"]
    assert worker_env["COMPACTION_WORKER_METRICS_PORT"] == str(WORKER_PORT)
    assert worker_env["COMPACTION_WORKER_METRICS_HOST"] == "0.0.0.0"
    jobs = scrape_jobs(PROMETHEUS)
    assert set(jobs) == {"compaction-api", "compaction-worker"}  # the names alerts.yml uses
    (api_target,) = jobs["compaction-api"]["static_configs"][0]["targets"]
    assert api_target == f"api:{Settings().api_port}"
    (dns,) = jobs["compaction-worker"]["dns_sd_configs"]
    assert (dns["names"], dns["port"]) == (["worker"], WORKER_PORT)
    prometheus = services["prometheus"]
    assert prometheus["profiles"] == ["observability"]
    mounted = {v.split(":")[0] for v in prometheus["volumes"]}
    assert {"./deploy/observability/prometheus.yml", "./deploy/observability/alerts.yml"} <= mounted
    assert all(p.startswith("127.0.0.1:") for p in prometheus["ports"])
    assert re.search(r":v\d+\.\d+\.\d+$", prometheus["image"])


def pod_template(path: Path) -> dict[str, Any]:
    (deployment,) = [d for d in load_yaml_documents(path) if d["kind"] == "Deployment"]
    template: dict[str, Any] = deployment["spec"]["template"]
    return template


def test_k8s_pods_announce_the_port_their_metrics_are_on() -> None:
    (config,) = load_yaml_documents(K8S / "configmap.yaml")
    assert config["data"]["COMPACTION_WORKER_METRICS_PORT"] == str(WORKER_PORT)
    assert config["data"]["COMPACTION_WORKER_METRICS_HOST"] == "0.0.0.0"
    for name, port in (("worker", WORKER_PORT), ("api", Settings().api_port)):
        template = pod_template(K8S / f"{name}.yaml")
        notes = template["metadata"]["annotations"]
        assert notes == {
            "prometheus.io/scrape": "true",
            "prometheus.io/port": str(port),
            "prometheus.io/path": "/metrics",
        }
        (container,) = template["spec"]["containers"]
        assert port in {p["containerPort"] for p in container["ports"]}
    jobs = scrape_jobs(PROMETHEUS_K8S)
    assert set(jobs) == {"compaction-api", "compaction-worker"}
    for name, job in jobs.items():
        (sd,) = job["kubernetes_sd_configs"]
        assert sd["role"] == "pod" and sd["namespaces"]["names"] == ["compaction"]
        keeps = {r["regex"] for r in job["relabel_configs"] if r.get("action") == "keep"}
        assert name.removeprefix("compaction-") in keeps and "true" in keeps
