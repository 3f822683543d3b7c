"""How fast the command line starts (issue 35): ``teamrag --help`` against a bare Typer app
with as many commands rendering its help, and the cold start of ``teamrag status`` and a
one-shot ``teamrag ask``, with ``python -X importtime`` summarised (where the time goes).

    .venv/bin/python benchmarks/cli_start.py                      # this checkout
    .venv/bin/python benchmarks/cli_start.py --code /tmp/old-tree  # another checkout of teamrag

Every command runs as a new process of this interpreter (``python -m bots``, what the
``teamrag`` script runs), from an empty folder (no ``.env``) with a data folder of its own
holding ``samples/kb``, with no LLM, Redis, Postgres or web search: nothing leaves the
machine. A measurement, not a test: the figures go in benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
QUESTION = "How long are Postgres backups kept?"
# Settings that would reach a server or an LLM when the caller's environment has them.
_OUTSIDE = ("OPENAI_", "LANGSMITH_", "LANGCHAIN_", "REDIS_URL", "DATABASE_URL", "CHROMA_")


def environment(code: Path, data: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TEAMRAG_", *_OUTSIDE)) and k != "PYTHONPATH"
    }
    return env | {"PYTHONPATH": str(code), "TEAMRAG_DATA_DIR": str(data)}


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}:\n{done.stderr[-2000:]}\n"
            "fix the checkout (--code) or its environment, then run again"
        )
    return done


def wall(args: list[str], env: dict[str, str], cwd: Path, runs: int) -> dict[str, float]:
    """Wall seconds of ``runs`` fresh processes: median, min and max."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        run(args, env, cwd)
        times.append(time.perf_counter() - start)
    return {
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
    }


def bare_typer_app(folder: Path, commands: int) -> Path:
    """A Typer app with ``commands`` commands, each with a docstring and two options: the
    least any command line with as many commands can cost to render its help."""
    lines = ["import typer", "", 'app = typer.Typer(help="A bare app.", no_args_is_help=True)']
    for n in range(commands):
        lines += [
            "",
            "",
            f'@app.command("command-{n}")',
            f'def command_{n}(name: str = typer.Option("", help="A name."), '
            'count: int = typer.Option(1, help="How many.")) -> None:',
            f'    """Command {n}: does one thing."""',
        ]
    lines += ["", "", 'app(prog_name="bare")']
    script = folder / "bare_app.py"
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return script


def importtime(args: list[str], env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """Where one start spends its imports: the total, and the self time of each top-level
    package (``-X importtime`` inflates every figure a little; the shares are what count)."""
    done = run(["-X", "importtime", *args], env, cwd)
    by_package: dict[str, float] = defaultdict(float)
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, _cumulative, name = line.removeprefix("import time:").split("|")
        by_package[name.strip().split(".")[0]] += int(own) / 1e6
    top = sorted(by_package.items(), key=lambda kv: kv[1], reverse=True)
    return {
        "imports_s": round(sum(by_package.values()), 3),
        "top_packages_s": {name: round(s, 3) for name, s in top[:10]},
    }


def command_count(env: dict[str, str], cwd: Path) -> int:
    probe = (
        "from bots.cli import app; print(len(app.registered_commands) + len(app.registered_groups))"
    )
    return int(run(["-c", probe], env, cwd).stdout.strip())


def measure(code: Path, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="teamrag-cli-start-") as tmp:
        folder = Path(tmp)
        env = environment(code, folder / "data")
        teamrag = ["-m", "bots"]
        commands = command_count(env, folder)
        bare = bare_typer_app(folder, commands)
        result: dict[str, Any] = {"code": str(code), "commands": commands, "runs": runs}
        result["python_s"] = wall(["-c", "pass"], env, folder, runs)
        result["bare_help_s"] = wall([str(bare), "--help"], env, folder, runs)
        result["help_s"] = wall([*teamrag, "--help"], env, folder, runs)
        result["help_over_bare"] = round(
            result["help_s"]["median_s"] / result["bare_help_s"]["median_s"], 2
        )
        run([*teamrag, "ingest", str(REPO / "samples" / "kb")], env, folder)  # not timed
        result["status_s"] = wall([*teamrag, "status"], env, folder, runs)
        ask = [*teamrag, "ask", QUESTION, "--json"]
        result["ask_s"] = wall(ask, env, folder, runs)
        final = json.loads(run(ask, env, folder).stdout)
        result["ask_agent_s"] = round(final["timings"]["total"] / 1000, 3)
        result["importtime"] = {
            "help": importtime([*teamrag, "--help"], env, folder),
            "status": importtime([*teamrag, "status"], env, folder),
            "ask": importtime(ask, env, folder),
        }
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, default=REPO, help="The teamrag checkout to run.")
    parser.add_argument("--runs", type=int, default=5, help="Processes per figure.")
    parser.add_argument("--json-out", type=Path, help="Also write the figures here.")
    options = parser.parse_args()
    result = measure(options.code.resolve(), options.runs)
    text = json.dumps(result, indent=2)
    print(text)
    if options.json_out:
        options.json_out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
