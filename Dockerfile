# Postgres 15 with the neotoma extension installed from its Debian package
# (scripts/package), plus the neotoma-mcp gateway. compose.yaml runs both.
# Build:  docker build -t neotoma .
# Run Postgres:    docker run -e POSTGRES_PASSWORD=secret -p 127.0.0.1:5432:5432 neotoma
#   The database the image creates ($POSTGRES_DB) gets the extension on first
#   start, and, with NEOTOMA_APP_PASSWORD set, a login role neotoma_app for
#   the gateway (granted neotoma_service). Then:
#   docker run --rm -i --network host neotoma neotoma-mcp --database-url postgres://neotoma_app:...@127.0.0.1/postgres

FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      ca-certificates curl build-essential pkg-config libclang-dev clang libssl-dev \
      postgresql-15 postgresql-server-dev-15 python3 python3-pip \
    && rm -rf /var/lib/apt/lists/*
RUN curl -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain 1.95.0
ENV PATH=/root/.cargo/bin:$PATH
RUN cargo install cargo-pgrx --version 0.18.0 --locked \
    && cargo pgrx init --pg15=/usr/lib/postgresql/15/bin/pg_config
WORKDIR /src
COPY . .
# The package (target/packages/neotoma-pg15_<version>_<arch>.deb) and the gateway.
RUN scripts/package 15 && cargo build --release -p neotoma-mcp

FROM postgres:15-bookworm
COPY --from=build /src/target/packages/ /tmp/packages/
# apt installs it as any Debian 12 with postgresql-15 does (tests/package/run).
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      /tmp/packages/neotoma-pg15_*.deb \
    && rm -rf /var/lib/apt/lists/* /tmp/packages
COPY --from=build /src/target/release/neotoma-mcp /usr/local/bin/neotoma-mcp
COPY scripts/docker-init.sh /docker-entrypoint-initdb.d/10-neotoma.sh
