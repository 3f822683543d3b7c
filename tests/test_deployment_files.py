"""The deployment files agree with the code: `.env.example` lists every setting with a
value that loads, `compose.yaml` wires the servers the bots need, and the guide names
every metric. The image (Dockerfile, health checks) is in test_deployment_image.py.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from dotenv import dotenv_values
from pydantic import AliasChoices, ValidationError
from pydantic.fields import FieldInfo

from adapters.chat.channels import load_channel_rules
from adapters.chat.metrics import Metrics
from bots.settings import Settings
from tests.conftest import REPO
from tests.support.docker_files import COMPOSE, compose

ENV_EXAMPLE = REPO / ".env.example"
# Read by docker compose itself (interpolation, profiles), not by teamrag.
COMPOSE_ONLY = {"COMPOSE_PROFILES", "POSTGRES_PASSWORD"}
SERVERS = ("redis", "chroma", "postgres")
BOTS = ("slack", "discord")
TEAMRAG_SERVICES = ("ingest", "http", *BOTS)


# --- .env.example ---------------------------------------------------------------------


def env_names(name: str, field: FieldInfo) -> list[str]:
    """The variables that set a field, the canonical one first."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [str(choice) for choice in alias.choices]
    if isinstance(alias, str):
        return [alias]
    return [f"TEAMRAG_{name.upper()}"]


def settings_variables() -> dict[str, str]:
    """Every variable of :class:`Settings` -> its field name."""
    return {env: name for name, f in Settings.model_fields.items() for env in env_names(name, f)}


def example_lines() -> dict[str, tuple[bool, str]]:
    """``.env.example``'s ``NAME=value`` lines: name -> (commented out, value as decoded)."""
    lines: dict[str, tuple[bool, str]] = {}
    for line in ENV_EXAMPLE.read_text(encoding="utf-8").splitlines():
        match = re.fullmatch(r"(#\s*)?([A-Z][A-Z0-9_]*)=(.*)", line.strip())
        if match is None:
            continue
        commented, name, raw = bool(match[1]), match[2], match[3]
        assert name not in lines, f"{name} is listed twice in .env.example"
        # Decoded as teamrag (python-dotenv) and docker compose read it: quotes, \n escapes.
        lines[name] = (commented, dotenv_values(stream=io.StringIO(f"{name}={raw}\n"))[name] or "")
    return lines


def test_env_example_lists_every_setting() -> None:
    listed = example_lines()
    missing = [
        env_names(name, f)[0]
        for name, f in Settings.model_fields.items()
        if env_names(name, f)[0] not in listed
    ]
    assert not missing, (
        f"settings missing from .env.example: {missing}; add a commented line with the "
        "default (or an example) and a one-line comment above it"
    )


def test_env_example_names_only_real_variables() -> None:
    unknown = set(example_lines()) - set(settings_variables()) - COMPOSE_ONLY
    assert not unknown, f".env.example names variables nothing reads: {sorted(unknown)}"


def test_env_example_lines_load_and_show_the_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each line is a valid value; a commented-out line shows the real default (unless the
    default is unset, where it shows an example)."""
    variables = settings_variables()
    wrong = []
    for env, (commented, value) in example_lines().items():
        if env not in variables:  # COMPOSE_ONLY, or a stray name (the test above says which)
            continue
        name = variables[env]
        field = Settings.model_fields[name]
        default = field.default_factory() if field.default_factory else field.default  # type: ignore[call-arg]
        with monkeypatch.context() as patch:
            for other in variables:
                patch.delenv(other, raising=False)
            patch.setenv(env, value)
            try:
                loaded = getattr(Settings(_env_file=None), name)
            except ValidationError as exc:
                wrong.append(f"{env}={value!r} does not load: {exc.errors()[0]['msg']}")
                continue
        if commented and default not in (None, "") and loaded != default:
            wrong.append(f"{env}={value!r} is shown as the default, which is {default!r}")
    assert not wrong, "; ".join(wrong)


def test_env_example_copied_to_env_loads_and_its_channel_rules_parse(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for env in settings_variables():
        monkeypatch.delenv(env, raising=False)
    settings = Settings(_env_file=ENV_EXAMPLE)  # exactly as `cp .env.example .env` leaves it
    assert settings.redis_url is None and settings.database_url is None  # runs embedded
    _, inline = example_lines()["TEAMRAG_CHANNELS"]
    rules = load_channel_rules(None, inline)
    assert rules.channels["C0123ABCD"].scopes == frozenset({"engineering", "public"})
    assert rules.channels["C0123ABCD"].follow_ups is False


# --- compose.yaml -----------------------------------------------------------------------


def test_compose_has_the_servers_and_bots_with_health_checks() -> None:
    services = compose()["services"]
    assert set(services) >= {*SERVERS, *TEAMRAG_SERVICES}
    for name in (*SERVERS, *BOTS):
        check = services[name].get("healthcheck", {})
        assert check.get("test") and not check.get("disable"), f"{name} has no health check"
    assert services["redis"]["image"] == "redis:8"
    assert services["redis"]["command"][-2:] == ["--appendonly", "yes"]
    assert services["postgres"]["image"] == "postgres:17"
    # The Chroma server must speak the API of the chromadb client inside the image.
    client = version("chromadb")
    image, tag = services["chroma"]["image"].split(":")
    assert image == "chromadb/chroma"
    assert tag.split(".")[:2] == client.split(".")[:2], (image, tag, client)
    declared = set(compose()["volumes"])
    for name, service in services.items():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            assert source.startswith(".") or source in declared, f"{name}: volume {source}"


def test_compose_points_every_teamrag_service_at_the_shared_parts() -> None:
    services = compose()["services"]
    for name in TEAMRAG_SERVICES:
        service = services[name]
        env = service["environment"]
        assert service["env_file"] in (".env", [".env"]), name
        assert env["REDIS_URL"] == "redis://redis:6379/0", name
        assert env["CHROMA_URL"] == "http://chroma:8000", name
        assert env["DATABASE_URL"].startswith("postgresql://teamrag:"), name
        assert env["DATABASE_URL"].endswith("@postgres:5432/teamrag"), name
        assert env["TEAMRAG_DATA_DIR"] == "/data" and "teamrag-data:/data" in service["volumes"]
    for name in BOTS:
        bot = services[name]
        assert bot["command"] == [name]
        assert bot["environment"]["TEAMRAG_OPS_PORT"] == "9100"
        assert bot["depends_on"] == {s: {"condition": "service_healthy"} for s in SERVERS}
    assert "3000:3000" in services["slack"]["ports"]
    http = services["http"]
    assert http["command"][0] == "serve" and "8080:8080" in http["ports"]
    assert "8080/healthz" in " ".join(http["healthcheck"]["test"])
    ingest = services["ingest"]
    assert ingest["profiles"] == ["ingest"] and ingest["command"] == ["ingest", "/docs"]
    assert "./docs-to-ingest:/docs:ro" in ingest["volumes"]
    assert ingest["depends_on"] == {"chroma": {"condition": "service_healthy"}}


def test_compose_variables_are_in_env_example() -> None:
    used = set(re.findall(r"\$\{([A-Z_]+)", COMPOSE.read_text(encoding="utf-8")))
    assert used and used <= set(example_lines()), used - set(example_lines())


def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    docker = shutil.which("docker")
    if (
        docker is None
        or subprocess.run([docker, "compose", "version"], capture_output=True).returncode
    ):
        pytest.skip("no `docker compose` (v2) on this machine; compose.yaml is checked by parsing")
    shutil.copy(COMPOSE, tmp_path / "compose.yaml")
    env = ENV_EXAMPLE.read_text(encoding="utf-8").replace(
        "\nPOSTGRES_PASSWORD=\n", "\nPOSTGRES_PASSWORD=x\n"
    )
    (tmp_path / ".env").write_text(env, encoding="utf-8")
    done = subprocess.run(
        [docker, "compose", "config", "-q"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


# --- the guide --------------------------------------------------------------------------


def test_deployment_guide_names_every_metric() -> None:
    guide = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    names = {
        family.name + ("_total" if family.type == "counter" else "")
        for family in Metrics(process=False).registry.collect()
    }
    missing = sorted(name for name in names if name not in guide)
    assert names and not missing, f"metrics not in docs/deployment.md: {missing}"


def test_readme_points_to_the_guide_and_keeps_the_two_commands() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "docs/deployment.md" in readme
    assert "make demo" in readme and "make test" in readme


def test_make_demo_keeps_the_sample_company_out_of_the_teams_data_folder() -> None:
    """The demo's documents go to a folder of their own: a team's first `teamrag ingest`
    starts in the default folder, empty, and its answers never quote the samples."""
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")
    dry = subprocess.run(
        [make, "-n", "demo"], cwd=REPO, capture_output=True, text=True, timeout=60, check=True
    )
    runs = [line for line in dry.stdout.splitlines() if "bin/teamrag " in line]
    assert len(runs) == 4 and all(r.startswith("TEAMRAG_DATA_DIR=.teamrag-demo ") for r in runs)
    assert Settings.model_fields["data_dir"].default == Path(".teamrag")
    assert "`.teamrag-demo`" in (REPO / "README.md").read_text(encoding="utf-8")
