-- 0.17.0 -> 0.18.0: no change to the installed SQL yet (this release's
-- changes are in the library and its queries).
\echo Use "ALTER EXTENSION neotoma UPDATE" to load this file. \quit

-- Supabase-style platform roles get what neotoma_user has, as at install.
SELECT neotoma_private.grant_platform_roles();
