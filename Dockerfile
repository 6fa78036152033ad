# SecretsAuditEnv: multi-stage build. Stage 1 compiles the one binary;
# stage 2 is a slim Debian runtime with what agent commands and the graders
# need (bash, git, git-filter-repo, python3 + pytest in a venv, bubblewrap).
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY graders graders
COPY server server
COPY tools tools
COPY tests tests
COPY web web
COPY tasks tasks
RUN cargo build --release --locked --bin secaudit

FROM debian:bookworm-slim AS runtime
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      bash git bubblewrap python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY scripts/requirements.txt scripts/requirements.txt
RUN python3 -m venv /app/.venv \
 && /app/.venv/bin/pip install --no-cache-dir -r scripts/requirements.txt \
 && chmod -R a+rX /app/.venv
COPY --from=build /src/target/release/secaudit /usr/local/bin/secaudit
COPY tasks tasks
COPY scripts/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
RUN mkdir -p /app/data
# The server runs as root *inside* the container and drops every agent
# command (and every health-grading pytest run) to an unprivileged uid of
# its own, so a command can neither signal nor read the server, the data
# dir or another session. Docker's default seccomp profile refuses the
# namespaces bubblewrap needs; the server then picks its namespace-free tier
# (Landlock + seccomp + a supervising subreaper) by itself, and /health
# says which tier is in force. With `USER 1000` it still contains commands
# (Landlock and seccomp), but they share the server's uid.
ENV PORT=7860 \
    SECAUDIT_TASKS_DIR=/app/tasks \
    SECAUDIT_DATA_DIR=/app/data \
    SECAUDIT_VENV=/app/.venv
# MAX_CONCURRENT_ENVS and SESSION_IDLE_TIMEOUT_S are left to the server's
# defaults (server/src/env/config.rs), the one place they are defined.
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s CMD bash -c 'exec 3<>/dev/tcp/127.0.0.1/${PORT}' || exit 1
ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]
