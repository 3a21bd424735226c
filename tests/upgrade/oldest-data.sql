-- Data stored in a database at the oldest release's SQL (sql/releases/neotoma--0.1.0.sql),
-- the rows before.sql stored there through the 0.19.0 library (the last one
-- serving 0.1.0), copied out once: today's library only serves its own
-- version and the one before. tests/upgrade/run loads it (as a superuser,
-- triggers off, the way pg_restore loads data) after CREATE EXTENSION
-- neotoma VERSION '0.1.0', updates through every upgrade script and checks
-- the data (after.sql). The installation's signing key comes with it: the
-- observations are signed with it.
SET session_replication_role = replica;
DELETE FROM neotoma.signing_keys;
COPY neotoma.signing_keys (user_id, id, secret, created_at, retired_at, revoked_at) FROM stdin;
00000000-0000-0000-0000-000000000000	02718a13-2073-45e5-a65f-7a1adc55bbaa	\\x01dbcd755013b2e9cd72819796c221e5dcc641c5776e18bf48d52eb4ab2436cf	2026-11-28 02:27:42.083762+00	\N	\N
\.
COPY neotoma.sources (user_id, id, content_hash, source_type, mime_type, original_filename, file_size, storage_path, content, source_priority, provenance, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	183e3087-25f0-870e-85e8-0ee7a3694d97	707f3612e2a63c274ffb0fbff95b05678b44a17f4d44ebded0522964963843e1	structured	application/json	\N	208	\N	{"entities": [{"name": "Ann Lee", "email": "ann@example.com", "entity_type": "person"}, {"note": "kept", "date_due": "2024-02-01", "amount_due": 10, "entity_type": "invoice", "vendor_name": "Acme", "invoice_number": "INV-1"}]}	100	{}	2026-11-28 02:27:42.088204+00
a0000000-0000-0000-0000-00000000000a	31a95cc0-fa9e-843a-9338-059837e9c006	3e798611fcbb5c63d21d7726cbdc91567e7624b93386ce3ec470f5ed933dd49b	relationship	application/json	\N	\N	\N	{"relationship": {"metadata": {}, "source_entity_id": "ent_9302c275302ea7cabf9ed5caa165473c", "target_entity_id": "ent_c8c39bfaffee8881b91b243a9fc0d8a6", "relationship_type": "REFERS_TO"}}	100	{}	2026-11-28 02:27:42.107106+00
a0000000-0000-0000-0000-00000000000a	45f8059d-a448-85f7-a7fc-a7baa881f083	3a9f8c4d02604b0d733211ef0515839bfeff18eadf82c955e13fc86f55ca1041	correction	application/json	\N	\N	\N	{"correction": {"field": "amount_due", "value": 12, "entity_id": "ent_9302c275302ea7cabf9ed5caa165473c"}}	1000	{}	2026-11-28 02:27:42.104272+00
\.
COPY neotoma.interpretation_runs (user_id, id, source_id, interpreter, config, status, entities_created, observations_created, unknown_fields_count, error, started_at, finished_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	c54275cb-08f7-8f4d-a821-7b0980e948be	183e3087-25f0-870e-85e8-0ee7a3694d97	structured	{}	completed	2	2	1	\N	2026-11-28 02:27:42.088204+00	2026-11-28 02:27:42.103619+00
\.
COPY neotoma.raw_fragments (user_id, id, source_id, entity_id, observation_id, interpretation_run_id, entity_type, fragment_key, fragment_value, inferred_type, migrated_at, migrated_observation_id, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	bf0083fa-98f0-857c-b0cd-7eddeb5ffa5f	183e3087-25f0-870e-85e8-0ee7a3694d97	ent_9302c275302ea7cabf9ed5caa165473c	66d74660-07ad-87b2-b0d2-2c97c9962606	c54275cb-08f7-8f4d-a821-7b0980e948be	invoice	note	"kept"	string	\N	\N	2026-11-28 02:27:42.088204+00
\.
COPY neotoma.entities (user_id, id, entity_type, canonical_name, identity_key, merged_into, merged_at, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	ent_9302c275302ea7cabf9ed5caa165473c	invoice	INV-1 · Acme	invoice_number=inv-1|vendor_name=acme	\N	\N	2026-11-28 02:27:42.088204+00
a0000000-0000-0000-0000-00000000000a	ent_c8c39bfaffee8881b91b243a9fc0d8a6	person	Ann Lee	email=ann@example.com	\N	\N	2026-11-28 02:27:42.088204+00
\.
COPY neotoma.entity_identifiers (user_id, entity_id, field, value) FROM stdin;
a0000000-0000-0000-0000-00000000000a	ent_9302c275302ea7cabf9ed5caa165473c	invoice_number	inv-1
a0000000-0000-0000-0000-00000000000a	ent_9302c275302ea7cabf9ed5caa165473c	vendor_name	acme
a0000000-0000-0000-0000-00000000000a	ent_c8c39bfaffee8881b91b243a9fc0d8a6	email	ann@example.com
a0000000-0000-0000-0000-00000000000a	ent_c8c39bfaffee8881b91b243a9fc0d8a6	name	ann lee
\.
COPY neotoma.observations (user_id, id, entity_id, entity_type, schema_version, source_id, interpretation_run_id, kind, observed_at, specificity_score, source_priority, fields, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	23307432-c867-8e5f-ae96-eef47b645a21	ent_9302c275302ea7cabf9ed5caa165473c	invoice	1.0	45f8059d-a448-85f7-a7fc-a7baa881f083	\N	correction	2026-11-28 02:27:42.105532+00	1	1000	{"amount_due": 12}	2026-11-28 02:27:42.104272+00
a0000000-0000-0000-0000-00000000000a	4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc	ent_c8c39bfaffee8881b91b243a9fc0d8a6	person	1.0	183e3087-25f0-870e-85e8-0ee7a3694d97	c54275cb-08f7-8f4d-a821-7b0980e948be	store	2026-11-28 02:27:42.088204+00	0.16666666666666666	100	{"name": "Ann Lee", "email": "ann@example.com"}	2026-11-28 02:27:42.088204+00
a0000000-0000-0000-0000-00000000000a	66d74660-07ad-87b2-b0d2-2c97c9962606	ent_9302c275302ea7cabf9ed5caa165473c	invoice	1.0	183e3087-25f0-870e-85e8-0ee7a3694d97	c54275cb-08f7-8f4d-a821-7b0980e948be	store	2026-11-28 02:27:42.088204+00	0.2857142857142857	100	{"date_due": "2024-02-01", "amount_due": 10, "vendor_name": "Acme", "invoice_number": "INV-1"}	2026-11-28 02:27:42.088204+00
\.
COPY neotoma.entity_snapshots (user_id, entity_id, entity_type, schema_version, snapshot, provenance, field_provenance, reducer_state, observation_count, last_observation_at, computed_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	ent_9302c275302ea7cabf9ed5caa165473c	invoice	1.0	{"date_due": "2024-02-01", "amount_due": 12, "vendor_name": "Acme", "invoice_number": "INV-1"}	{"date_due": "66d74660-07ad-87b2-b0d2-2c97c9962606", "amount_due": "23307432-c867-8e5f-ae96-eef47b645a21", "vendor_name": "66d74660-07ad-87b2-b0d2-2c97c9962606", "invoice_number": "66d74660-07ad-87b2-b0d2-2c97c9962606"}	{"date_due": {"source_id": "183e3087-25f0-870e-85e8-0ee7a3694d97", "observed_at": "2026-11-28T02:27:42.088204Z", "observation_id": "66d74660-07ad-87b2-b0d2-2c97c9962606", "source_priority": 100, "specificity_score": 0.2857142857142857}, "amount_due": {"source_id": "45f8059d-a448-85f7-a7fc-a7baa881f083", "observed_at": "2026-11-28T02:27:42.105532Z", "observation_id": "23307432-c867-8e5f-ae96-eef47b645a21", "source_priority": 1000, "specificity_score": 1.0}, "vendor_name": {"source_id": "183e3087-25f0-870e-85e8-0ee7a3694d97", "observed_at": "2026-11-28T02:27:42.088204Z", "observation_id": "66d74660-07ad-87b2-b0d2-2c97c9962606", "source_priority": 100, "specificity_score": 0.2857142857142857}, "invoice_number": {"source_id": "183e3087-25f0-870e-85e8-0ee7a3694d97", "observed_at": "2026-11-28T02:27:42.088204Z", "observation_id": "66d74660-07ad-87b2-b0d2-2c97c9962606", "source_priority": 100, "specificity_score": 0.2857142857142857}}	{"fields": {"date_due": {"v": "2024-02-01", "by": {"o": "66d74660-07ad-87b2-b0d2-2c97c9962606", "p": 100, "s": "183e3087-25f0-870e-85e8-0ee7a3694d97", "t": 1795832862088204, "x": 0.2857142857142857}, "kind": "value"}, "amount_due": {"v": 12, "by": {"o": "23307432-c867-8e5f-ae96-eef47b645a21", "p": 1000, "s": "45f8059d-a448-85f7-a7fc-a7baa881f083", "t": 1795832862105532, "x": 1.0}, "kind": "value"}, "vendor_name": {"v": "Acme", "by": {"o": "66d74660-07ad-87b2-b0d2-2c97c9962606", "p": 100, "s": "183e3087-25f0-870e-85e8-0ee7a3694d97", "t": 1795832862088204, "x": 0.2857142857142857}, "kind": "value"}, "invoice_number": {"v": "INV-1", "by": {"o": "66d74660-07ad-87b2-b0d2-2c97c9962606", "p": 100, "s": "183e3087-25f0-870e-85e8-0ee7a3694d97", "t": 1795832862088204, "x": 0.2857142857142857}, "kind": "value"}}, "observation_count": 2, "last_observation_at": 1795832862105532}	2	2026-11-28 02:27:42.105532+00	2026-11-28 02:27:42.105532+00
a0000000-0000-0000-0000-00000000000a	ent_c8c39bfaffee8881b91b243a9fc0d8a6	person	1.0	{"name": "Ann Lee", "email": "ann@example.com"}	{"name": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc", "email": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc"}	{"name": {"source_id": "183e3087-25f0-870e-85e8-0ee7a3694d97", "observed_at": "2026-11-28T02:27:42.088204Z", "observation_id": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc", "source_priority": 100, "specificity_score": 0.16666666666666666}, "email": {"source_id": "183e3087-25f0-870e-85e8-0ee7a3694d97", "observed_at": "2026-11-28T02:27:42.088204Z", "observation_id": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc", "source_priority": 100, "specificity_score": 0.16666666666666666}}	{"fields": {"name": {"v": "Ann Lee", "by": {"o": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc", "p": 100, "s": "183e3087-25f0-870e-85e8-0ee7a3694d97", "t": 1795832862088204, "x": 0.16666666666666666}, "kind": "value"}, "email": {"v": "ann@example.com", "by": {"o": "4970a0f7-4ee7-884c-9d0c-e9f9aa0e14dc", "p": 100, "s": "183e3087-25f0-870e-85e8-0ee7a3694d97", "t": 1795832862088204, "x": 0.16666666666666666}, "kind": "value"}}, "observation_count": 1, "last_observation_at": 1795832862088204}	1	2026-11-28 02:27:42.088204+00	2026-11-28 02:27:42.088204+00
\.
COPY neotoma.relationships (user_id, id, relationship_type, source_entity_id, target_entity_id, snapshot, provenance, reducer_state, observation_count, last_observation_at, merged_into, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	fa0d0d89-05f3-8fed-95ff-097b2299d3bf	REFERS_TO	ent_9302c275302ea7cabf9ed5caa165473c	ent_c8c39bfaffee8881b91b243a9fc0d8a6	{}	{}	{"fields": {}, "observation_count": 1, "last_observation_at": 1795832862108638}	1	2026-11-28 02:27:42.108638+00	\N	2026-11-28 02:27:42.107106+00
\.
COPY neotoma.relationship_observations (user_id, id, relationship_id, source_id, observed_at, source_priority, specificity_score, metadata, created_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	aaa2a461-cf8c-8863-a10e-b565f0897f01	fa0d0d89-05f3-8fed-95ff-097b2299d3bf	31a95cc0-fa9e-843a-9338-059837e9c006	2026-11-28 02:27:42.108638+00	100	1	{}	2026-11-28 02:27:42.107106+00
\.
COPY neotoma.timeline_events (user_id, id, event_type, event_timestamp, source_id, entity_id, entity_ids, source_field, observation_id, properties) FROM stdin;
a0000000-0000-0000-0000-00000000000a	bd456858-8e02-82eb-b591-9c3548761e37	InvoiceDue	2024-02-01 00:00:00+00	183e3087-25f0-870e-85e8-0ee7a3694d97	ent_9302c275302ea7cabf9ed5caa165473c	{ent_9302c275302ea7cabf9ed5caa165473c}	date_due	66d74660-07ad-87b2-b0d2-2c97c9962606	{"field": "date_due", "value": "2024-02-01", "entity_type": "invoice"}
\.
COPY neotoma.api_tokens (user_id, id, token_hash, name, created_at, revoked_at) FROM stdin;
a0000000-0000-0000-0000-00000000000a	883b22ae-4db1-44a0-822d-dcb9dcff5f59	oldhash	old token	2026-11-28 02:27:42.109838+00	\N
\.
RESET session_replication_role;
