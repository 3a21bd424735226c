-- 65_word_postings: the questions answered with the postings, then
-- without them (the posted lexemes, kept in `kept`, deleted for a moment
-- as a superuser; their rows stay), into `answers`; then posted again.
TRUNCATE answers;
SELECT pg_temp.ask(true);
RESET ROLE;
DELETE FROM neotoma.posted_lexemes;
SET ROLE neotoma_regress_agent;
SELECT pg_temp.ask(false);
RESET ROLE;
INSERT INTO neotoma.posted_lexemes SELECT * FROM kept;
SET ROLE neotoma_regress_agent;
