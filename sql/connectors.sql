-- Connections to outside providers (seed 001 §3.22–3.27): a Plaid item, an
-- e-mail account. What a sync needs, and its secret (a Plaid access token,
-- a password) only as ciphertext: the gateway encrypts it (AES-256-GCM,
-- under a key the database never sees) before it gets here. No user may
-- read `secret`, not even its own: the extension hands it to the gateway's
-- role (neotoma_service) inside the work of a sync, and to nobody else.
CREATE TABLE neotoma.connectors (
  user_id              uuid        NOT NULL,
  id                   uuid        NOT NULL,
  provider             text        NOT NULL,
  -- The provider's id of the connection (Plaid's item_id; user@host/mailbox).
  external_id          text        NOT NULL,
  -- What is not secret: institution, products, accounts; host, port, mailbox.
  settings             jsonb       NOT NULL DEFAULT '{}',
  secret               bytea,
  -- Where the next incremental sync starts (Plaid's cursor; UIDVALIDITY:UID).
  cursor               text,
  status               text        NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'error', 'revoked')),
  last_error           text,
  last_successful_sync timestamptz,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  -- Where its syncs store what they read (the workspace it was connected in).
  workspace            text        NOT NULL DEFAULT 'default',
  PRIMARY KEY (user_id, id),
  UNIQUE (user_id, provider, external_id)
);
COMMENT ON TABLE neotoma.connectors IS
  'Connections to outside providers (Plaid items, e-mail accounts); secrets are encrypted by the gateway and readable by no user.';

-- Sync runs of provider imports (sync_provider_imports): what each read.
CREATE TABLE neotoma.sync_runs (
  user_id      uuid        NOT NULL,
  id           uuid        NOT NULL,
  provider     text        NOT NULL,
  status       text        NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  stats        jsonb       NOT NULL DEFAULT '{}',
  error        text,
  started_at   timestamptz NOT NULL,
  completed_at timestamptz,
  PRIMARY KEY (user_id, id)
);
