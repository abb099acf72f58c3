# lineage-warehouse: the extraction job on the embedded default (the sample logs in conf/local.yaml),
# Java 17 + Python 3.11 from Debian bookworm, run as a non-root user, Delta jars resolved at build.
#   docker build -t lineage-warehouse .
#   docker run --rm -v "$PWD/warehouse:/opt/lineage/warehouse" lineage-warehouse
#   docker run --rm -v "$PWD/warehouse:/opt/lineage/warehouse" lineage-warehouse \
#     lineage upstream reports.daily_revenue
# Install steps: scripts/install.sh, the same script `make venv` runs.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

ENV LANG=C.UTF-8 PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1
COPY scripts/install.sh /usr/local/sbin/lineage-install
RUN lineage-install --system && rm /usr/local/sbin/lineage-install \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin lineage \
 && install -d -o lineage -g lineage /opt/lineage

WORKDIR /opt/lineage
USER lineage
COPY --chown=lineage:lineage pyproject.toml README.md ./
COPY --chown=lineage:lineage lineage_udfs lineage_udfs
COPY --chown=lineage:lineage scripts scripts
COPY --chown=lineage:lineage conf conf
COPY --chown=lineage:lineage jobs jobs
COPY --chown=lineage:lineage data/sample data/sample
RUN scripts/install.sh --python /usr/bin/python3 --venv /opt/lineage/.venv \
      --extras spark,emit,cli --resolve-jars

ENV PATH=/opt/lineage/.venv/bin:$PATH \
    SPARK_CONF_DIR=/opt/lineage/conf \
    PYSPARK_PYTHON=/opt/lineage/.venv/bin/python \
    PYSPARK_DRIVER_PYTHON=/opt/lineage/.venv/bin/python
VOLUME ["/opt/lineage/warehouse"]
CMD ["spark-submit", "jobs/extract.py"]
