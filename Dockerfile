# Postgres 15 with the neotoma extension installed, plus the neotoma-mcp
# gateway. Build:  docker build -t neotoma .
# Run Postgres:    docker run -e POSTGRES_PASSWORD=secret -p 5432:5432 neotoma
#   then `CREATE EXTENSION neotoma;` in your database, a login role for the
#   gateway with `GRANT neotoma_service TO <role>` (and `neotoma_operator` for
#   operator tokens), and point the gateway at it:
#   docker run --rm -i --network host neotoma neotoma-mcp --database-url postgres://...

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
RUN cd extension && cargo pgrx package --pg-config /usr/lib/postgresql/15/bin/pg_config --out-dir /out \
    && cargo build --release -p neotoma-mcp && cp target/release/neotoma-mcp /out/ \
    && PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config scripts/install-model \
    && mkdir -p /out/usr/share/postgresql/15 && cp -r /usr/share/postgresql/15/neotoma /out/usr/share/postgresql/15/

FROM postgres:15-bookworm
COPY --from=build /out/usr/share/postgresql/15/extension/ /usr/share/postgresql/15/extension/
# Released versions and the upgrades from them (ALTER EXTENSION neotoma UPDATE).
COPY extension/sql/releases/ extension/sql/upgrades/ /usr/share/postgresql/15/extension/
COPY --from=build /out/usr/lib/postgresql/15/lib/ /usr/lib/postgresql/15/lib/
# The built-in embedding model (semantic search), from scripts/install-model.
COPY --from=build /out/usr/share/postgresql/15/neotoma/ /usr/share/postgresql/15/neotoma/
COPY --from=build /out/neotoma-mcp /usr/local/bin/neotoma-mcp
# On first start, the database the image creates ($POSTGRES_DB) gets the extension.
RUN echo "CREATE EXTENSION IF NOT EXISTS neotoma;" > /docker-entrypoint-initdb.d/10-neotoma.sql
