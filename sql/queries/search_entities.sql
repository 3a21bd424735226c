-- retrieve_entities with `search`: the user's entities whose text has the
-- query's words, or whose name is like it, best first, then by id.
-- $1 user, $2 the query's trigrams (text[]), $3 the type (or null),
-- $4 include merged, $5 include deleted, $6 include snapshots
-- ('true'/'false'), $7 limit, $8 offset, $9 the least name similarity;
-- what to match (search_subgraph's search_in_*): $10 snapshot values,
-- $11 names, $12 aliases ('true'/'false'), $13 a type name (or null: types
-- not matched); semantic: $14 the query's embedding (real[], or null:
-- none), $15 the least cosine similarity, $16 the mode ('lexical',
-- 'semantic', 'hybrid'), $17 Reciprocal Rank Fusion's k, $18 the embedding
-- model (the rows compared), $19 the most entities semantic search ranks
-- (the nearest); $20 also match every observation's words and those of
-- the stored files they came from ('true'/'false'); $21 the workspaces
-- (text[]: only their entities answer, and only theirs count in a term's
-- weight; the lines marked ws:some leave when they are all the user's);
-- $22 the question's words (stop words dropped: neotoma_core::question),
-- $23 its character pairs (scripts written without spaces), $24 the text
-- search configuration of its language, $25 the most entities a term may
-- match and still be rare, $26 the most
-- names a word no entity has brings; $27 how many of the embeddings'
-- lists semantic search reads, the nearest the query (0: all of them).
-- Each `@@` runs as neotoma.@@ (actions/search.rs: the same match, leakproof,
-- so the word indexes serve it through row level security); the snapshots'
-- words are matched with the user's word too (neotoma._user_words, whose
-- index answers one user's entities only).
-- A question is a set of terms (a word, as written and as stemmed; a
-- character pair), any of which an entity may have: each weighs its
-- inverse document frequency among the user's entities of the workspaces
-- searched (as BM25 weighs it), and an entity's text coverage is the weight of the terms it has
-- over the weight of them all. A term matching more than $25 entities is
-- common: it adds its weight to the entities the rare terms found, and
-- only when every term is common do the entities having all of them
-- answer.
-- Lexical score = 0.6 × name similarity (trigrams, 1 for the same name)
--               + 0.4 × text coverage (0 to 1);
-- an entity matched by its type alone scores 0.1. Semantic score = the
-- cosine similarity of the embeddings. relevance_score is the mode's: in
-- hybrid, (lexical score / (k + lexical rank) + 1 / (k + semantic rank)) ×
-- (k + 1) / 2, so 1 for an entity first in both by its very name, while an
-- entity the words barely cover (a name said in many turns) weighs little.
WITH terms AS (
  -- With the user's word (the index of the snapshots' words answers only
  -- the user's then), computed here: under row level security an index
  -- condition must be leakproof, and tsquery's && is not.
  SELECT t.n, t.word, t.tq, t.pair, t.common, t.lexemes
         , t.tq && neotoma._user_word($1::uuid) AS user_tq -- new
  FROM (
    SELECT w.n, w.w AS word, plainto_tsquery('pg_catalog.simple', w.w) || plainto_tsquery('pg_catalog.english', w.w)
                || plainto_tsquery($24::regconfig, w.w) AS tq, false AS pair,
           -- Common, known beforehand (sql/embeddings.sql, common_lexemes):
           -- the word is one lexeme by one of its configurations, and more
           -- entities than a rare term's have that lexeme (for every type).
           -- (Counted over every workspace of the user: not when the
           -- search is in some of them, which ranks by their own.)
           $10 = 'true' AND $3::text IS NULL
           AND false -- ws:some
           AND EXISTS (
             SELECT FROM unnest(ARRAY['pg_catalog.simple', 'pg_catalog.english', $24]::regconfig[]) c(c)
             CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector(c.c, w.w)) AS l) x
             JOIN neotoma.common_lexemes k ON k.user_id = $1::uuid AND k.lexeme = x.l[1] AND k.entities > $25::int
             WHERE cardinality(x.l) = 1) AS common,
           -- Its lexemes when each configuration makes it one at most and
           -- each is posted (sql/word_postings.sql): the entities having
           -- it are then those of its lexemes' postings (null: not posted;
           -- always on the previous release's SQL, which has no postings).
           (SELECT CASE WHEN false THEN NULL
              WHEN bool_and(cardinality(x.l) <= 1) AND count(x.l[1]) > 0 AND bool_and(x.l[1] IS NULL OR EXISTS (SELECT FROM neotoma.posted_lexemes k WHERE k.user_id = $1::uuid AND k.lexeme = x.l[1])) THEN array_agg(DISTINCT x.l[1]) FILTER (WHERE x.l[1] IS NOT NULL) -- new
              END
            FROM unnest(ARRAY['pg_catalog.simple', 'pg_catalog.english', $24]::regconfig[]) c(c)
            CROSS JOIN LATERAL (SELECT tsvector_to_array(to_tsvector(c.c, w.w)) AS l) x
            LIMIT 1) AS lexemes
    FROM unnest($22::text[]) WITH ORDINALITY AS w(w, n)
    UNION ALL
    SELECT 1000 + g.n, g.g, quote_literal(g.g)::tsquery, true, false, NULL FROM unnest($23::text[]) WITH ORDINALITY AS g(g, n)) t
  WHERE numnode(t.tq) > 0),
-- Any term: what matched_fields and the observations' and files' words ask.
q AS (
  SELECT q.text_query
         , CASE WHEN numnode(q.text_query) > 0 THEN q.text_query && neotoma._user_word($1::uuid) END AS user_query -- new
  FROM (SELECT coalesce((SELECT string_agg('(' || t.tq::text || ')', ' | ')::tsquery FROM terms t), ''::tsquery) AS text_query) q),
n_entities AS (
  SELECT greatest(coalesce(sum(c.current), 0), 1)::float8 AS n FROM neotoma.entity_counts c
  WHERE c.user_id = $1::uuid AND ($3::text IS NULL OR c.entity_type = $3)
    AND c.workspace = ANY($21::text[]) -- ws:some
  ),
-- Each term's entities, one scan of its index each: all of them when rare
-- (none read when known common), each with what the ranking needs of its
-- snapshot, read here once (read again per entity, 1,788 entities of a
-- word took 9 of a search's 21 ms at 1,000,000 entities).
term_rows AS MATERIALIZED (
  SELECT t.n, h.entity_id, h.workspace, h.entity_type, h.name_count, h.rest
  FROM terms t
  CROSS JOIN LATERAL (
      SELECT s.entity_id, s.workspace, s.entity_type, length(s.name_trigrams) AS name_count,
             length(ts_delete(s.name_trigrams, $2::text[])) AS rest
      FROM neotoma.entity_snapshots s
      WHERE NOT t.pair AND NOT t.common AND $10 = 'true' AND s.user_id = $1::uuid AND s.search_vector OPERATOR(neotoma.@@) t.tq
        AND neotoma._user_words(s.user_id, s.search_vector) OPERATOR(neotoma.@@) t.user_tq -- new
        AND ($3::text IS NULL OR s.entity_type = $3)
        AND s.workspace = ANY($21::text[]) -- ws:some
      LIMIT $25::int + 1) h
  WHERE NOT t.pair
  UNION ALL
  -- A character pair, in the pairs of the snapshots' text.
  SELECT t.n, h.entity_id, h.workspace, h.entity_type, h.name_count, h.rest
  FROM terms t
  CROSS JOIN LATERAL (
      SELECT s.entity_id, s.workspace, s.entity_type, length(s.name_trigrams) AS name_count,
             length(ts_delete(s.name_trigrams, $2::text[])) AS rest
      FROM neotoma.entity_snapshots s
      WHERE t.pair AND $10 = 'true' AND s.user_id = $1::uuid AND s.search_grams OPERATOR(neotoma.@@) t.tq
        AND neotoma._user_words(s.user_id, s.search_grams) OPERATOR(neotoma.@@) t.user_tq -- new
        AND ($3::text IS NULL OR s.entity_type = $3)
        AND s.workspace = ANY($21::text[]) -- ws:some
      LIMIT $25::int + 1) h
  WHERE t.pair),
term_hits AS (
  SELECT t.n, t.word, t.tq, t.pair, t.lexemes, CASE WHEN t.common THEN $25::int + 1 ELSE coalesce(c.df, 0) END AS df
  FROM terms t LEFT JOIN (SELECT r.n, count(*) AS df FROM term_rows r GROUP BY r.n) c ON c.n = t.n),
weights AS (
  SELECT h.n, h.word, h.tq, h.pair, h.lexemes, h.df, ln(1 + (greatest(e.n, h.df) - h.df + 0.5) / (h.df + 0.5)) AS w
  FROM term_hits h, n_entities e),
mass AS (SELECT greatest(coalesce(sum(w.w), 0), 1e-9) AS total,
                coalesce(bool_and(w.df > $25::int), false) AS all_common,
                coalesce(bool_or(w.df > $25::int AND NOT w.pair), false) AS some_common,
                -- The one word's entities in its postings (of several,
                -- their word indexes intersect faster: a 3 % word and a
                -- 20 % one, 72 ms through the snapshots, 1 s through the
                -- postings at a million).
                coalesce(bool_and(w.lexemes IS NOT NULL), false) AND count(*) = 1 AS all_posted,
                (SELECT string_agg('(' || c.tq::text || ')', ' & ')::tsquery FROM weights c
                 WHERE c.df > 0 AND NOT c.pair) AS all_terms
                , (SELECT string_agg('(' || c.tq::text || ')', ' & ')::tsquery && neotoma._user_word($1::uuid) FROM weights c WHERE c.df > 0 AND NOT c.pair) AS all_user_terms -- new
         FROM weights w WHERE w.df > 0),
-- The user's entities merged into others and the deleted ones, each read
-- once as a hashed set from its partial index (entities_merged_into,
-- entities_deleted hold only those), not an entity row per hit: a common
-- word's thousands of hits read no entity row but those of the page.
moved AS (
  SELECT e.id, e.merged_into FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.merged_into IS NOT NULL),
-- When the one word is posted and common: the names that may be like the
-- query. One reaching the least similarity t shares at least ceil(t × n)
-- of the query's n trigrams, so it has one of the n − ceil(t × n) + 1
-- rarest (each counted up to $25 + 1 rows of the index of names, or known
-- to have more by neotoma.common_name_trigrams, as a typo's): the
-- names having one of those, compared later by their snapshots (a common
-- trigram, "  h", is in the names of thousands).
posted_names AS ( -- new
  SELECT DISTINCT t.entity_id FROM ( -- new
    SELECT g.g FROM mass m, unnest($2::text[]) g(g) -- new
    CROSS JOIN LATERAL (SELECT CASE WHEN EXISTS (SELECT FROM neotoma.common_name_trigrams c -- new
                                                 WHERE c.user_id = $1::uuid AND c.trigram = g.g AND c.names > $25::int) -- new
                               THEN $25::int + 1 -- new
                               ELSE (SELECT count(*) FROM (SELECT FROM neotoma.entity_name_trigrams t -- new
                                     WHERE t.user_id = $1::uuid AND t.trigram = g.g LIMIT $25::int + 1) x) END AS n) d -- new
    WHERE m.all_common AND m.all_posted AND $11 = 'true' -- new
    ORDER BY d.n, g.g -- new
    LIMIT greatest(cardinality($2::text[]) - ceil($9::float8 * cardinality($2::text[]))::int + 1, 0)) r -- new
  JOIN neotoma.entity_name_trigrams t ON t.user_id = $1::uuid AND t.trigram = r.g), -- new
-- Whether the one posted word's answer is ranked from its page alone: in
-- lexical or hybrid search without the observations', the files' and the
-- types' matches, every entity having the word scores alike lexically but
-- for its name (the coverage of one word is 1), so the page is among the
-- names like the query, the entities merged away (they count for
-- another), the semantic candidates and the first of the others by id;
-- hybrid's lexical places count those others (posted_gaps), the total is
-- counted from the postings (posted_total). Ranking every match cost about
-- 30 ms per 10,000 at a million.
posted_short AS ( -- new
  SELECT m.all_common AND m.all_posted AND $10 = 'true' AND $16 IN ('lexical', 'hybrid') AND $20 <> 'true' -- new
         AND $3::text IS NULL AND $13::text IS NULL AND $12 = 'true' AND $4 <> 'true' -- new
         AND coalesce((SELECT bool_and(cardinality(w.lexemes) = 1) FROM weights w WHERE w.df > 0 AND NOT w.pair), false) AS short, -- new
         (SELECT w.lexemes[1] FROM weights w WHERE w.df > 0 AND NOT w.pair LIMIT 1) AS lexeme -- new
  FROM mass m), -- new
-- The $27 lists nearest the query (none for an exact scan).
probed AS MATERIALIZED (
  SELECT ARRAY(SELECT l.list_no FROM neotoma.embedding_lists l
               WHERE $14::real[] IS NOT NULL AND $27::int <> 0 AND l.user_id = $1::uuid AND l.model = $18
               ORDER BY neotoma._cosine(l.centroid, $14::real[]) DESC, l.list_no LIMIT $27::int) AS lists),
-- (0.8.0 has no embeddings: the lines marked 0.9 leave.)
sem_hits AS (
  SELECT NULL::text AS entity_id, NULL::float8 AS sem_sim WHERE false
  -- The $19 nearest (each similarity computed once), of the selected
  -- workspaces: the candidates nearest first, each one's workspace looked
  -- up by key (a scalar subquery) until $19 are in the selection, not
  -- those of all of them (as a join, a hash of every snapshot of the user:
  -- 54 ms at 200,000 entities; per candidate, 15 ms of 3,676).
  UNION ALL (SELECT c.entity_id, c.sim FROM (
    SELECT v.entity_id, neotoma._cosine(v.embedding, $14::real[]) AS sim FROM (
      -- Every embedding of the user ($27 = 0: exact), or only those of the
      -- lists nearest the query and those in none (sql/embeddings.sql):
      -- each its own index scan (an OR of them, which a kept plan cannot
      -- simplify, read every embedding of the user: 686 ms at 1,000,000).
      SELECT v.entity_id, v.embedding FROM neotoma.entity_embeddings v
      WHERE $14::real[] IS NOT NULL AND $27::int = 0
        AND v.user_id = $1::uuid AND v.model = $18 AND ($3::text IS NULL OR v.entity_type = $3)
      UNION ALL
      SELECT v.entity_id, v.embedding FROM neotoma.entity_embeddings v
      WHERE $14::real[] IS NOT NULL AND $27::int <> 0
        AND v.user_id = $1::uuid AND v.model = $18 AND ($3::text IS NULL OR v.entity_type = $3)
        AND v.list_no = ANY ((SELECT p.lists FROM probed p)::int[])
        AND v.code IS NULL -- new
      -- Of those with a code, the $19 likest by their codes, then compared
      -- exactly (a list's embeddings read from the table: 10,743 pages for
      -- 64 lists at a million, 104 ms): the codes packed in the lists' rows
      -- (sql/embeddings.sql), and those written since, read from their
      -- index alone; an entity in both (its code changed since) counts once.
      UNION ALL -- new
      SELECT v.entity_id, v.embedding FROM ( -- new
        SELECT k.entity_id FROM ( -- new
          SELECT n.entity_id, n.similarity FROM neotoma._nearest_codes($1::uuid, $18, -- new
            (SELECT p.lists FROM probed p), $14::real[], $3::text, $19::int) n -- new
          WHERE $14::real[] IS NOT NULL AND $27::int <> 0 -- new
          UNION ALL -- new
          (SELECT c.entity_id, neotoma._code_similarity(c.code, $14::real[]) FROM neotoma.entity_embeddings c -- new
           WHERE $14::real[] IS NOT NULL AND $27::int <> 0 AND NOT c.packed -- new
             AND c.user_id = $1::uuid AND c.model = $18 AND ($3::text IS NULL OR c.entity_type = $3) -- new
             AND c.list_no = ANY ((SELECT p.lists FROM probed p)::int[]) AND c.code IS NOT NULL -- new
           ORDER BY 2 DESC, 1 LIMIT $19::int)) k -- new
        GROUP BY k.entity_id ORDER BY max(k.similarity) DESC, k.entity_id LIMIT $19::int) c -- new
      JOIN neotoma.entity_embeddings v ON v.user_id = $1::uuid AND v.model = $18 AND v.entity_id = c.entity_id -- new
      UNION ALL
      SELECT v.entity_id, v.embedding FROM neotoma.entity_embeddings v
      WHERE $14::real[] IS NOT NULL AND $27::int <> 0
        AND v.user_id = $1::uuid AND v.model = $18 AND ($3::text IS NULL OR v.entity_type = $3)
        AND v.list_no IS NULL) v
    ORDER BY 2 DESC, 1 OFFSET 0
    ) c
  WHERE (SELECT s.workspace FROM neotoma.entity_snapshots s -- ws:some
         WHERE s.user_id = $1::uuid AND s.entity_id = c.entity_id) = ANY($21::text[]) -- ws:some
  ORDER BY 2 DESC, 1 LIMIT $19)
  ),
-- The entities the rare terms found, with the weight of those they have
-- and their name's similarity to the query (trigrams, as pg_trgm's:
-- shared / (the query's + the name's − shared); the name's trigrams less
-- the query's are the name's − shared).
rare_hits AS (
  SELECT r.entity_id, sum(w.w) AS text_w, max(r.workspace) AS workspace, max(r.entity_type) AS entity_type,
         max(r.name_count) AS name_count, max(r.rest) AS rest
  FROM term_rows r JOIN weights w ON w.n = r.n
  WHERE w.df BETWEEN 1 AND $25::int
  GROUP BY r.entity_id),
text_hits AS (
  -- With the common terms they have too (their snapshot read again only
  -- when there are some).
  SELECT r.entity_id,
         (r.text_w + coalesce(CASE WHEN m.some_common THEN (
            SELECT sum(w.w) FROM weights w, neotoma.entity_snapshots s
            WHERE w.df > $25::int AND NOT w.pair AND s.user_id = $1::uuid AND s.entity_id = r.entity_id
              AND s.search_vector OPERATOR(neotoma.@@) w.tq) END, 0)) / m.total AS text_rank,
         CASE WHEN $11 = 'true' THEN (r.name_count - r.rest)::float8 / (cardinality($2::text[]) + r.rest) END AS name_sim,
         r.workspace, r.entity_type
  FROM rare_hits r, mass m
  UNION ALL
  -- Every term common: the entities having them all.
  SELECT s.entity_id, 1.0,
         CASE WHEN $11 = 'true' THEN (n.name_count - n.rest)::float8 / (cardinality($2::text[]) + n.rest) END,
         s.workspace, s.entity_type
  FROM mass m, neotoma.entity_snapshots s
  CROSS JOIN LATERAL (SELECT length(s.name_trigrams) AS name_count, length(ts_delete(s.name_trigrams, $2::text[])) AS rest) n
  WHERE m.all_common AND NOT m.all_posted AND $10 = 'true' AND s.user_id = $1::uuid AND s.search_vector OPERATOR(neotoma.@@) m.all_terms
    AND neotoma._user_words(s.user_id, s.search_vector) OPERATOR(neotoma.@@) m.all_user_terms -- new
    AND ($3::text IS NULL OR s.entity_type = $3)
    AND s.workspace = ANY($21::text[]) -- ws:some
  UNION ALL -- new
  -- The same when the one word is posted: from its postings alone (a
  -- snapshot read per entity cost 28,420 heap pages for a word in 3 % of a
  -- million), each name compared by its snapshot only when it may be like
  -- the query (posted_names).
  SELECT p.entity_id, 1.0, n.name_sim, p.workspace, p.entity_type -- new
  FROM mass m -- new
  CROSS JOIN LATERAL ( -- new
    SELECT p.entity_id, p.workspace, p.entity_type -- new
    FROM weights w JOIN neotoma.word_postings p ON p.user_id = $1::uuid AND p.lexeme = w.lexemes[1] -- new
    WHERE w.df > 0 AND NOT w.pair AND cardinality(w.lexemes) = 1 AND NOT (SELECT k.short FROM posted_short k) -- new
      AND ($3::text IS NULL OR p.entity_type = $3) -- new
      AND p.workspace = ANY($21::text[]) -- ws:some -- new
    UNION ALL -- new
    -- (posted_short: the names like the query, the entities merged away
    -- and the semantic candidates, each found by key; then the first
    -- others by id, read in the order of the index, past the deleted.)
    SELECT p.entity_id, p.workspace, p.entity_type -- new
    FROM (SELECT c.entity_id FROM posted_names c UNION SELECT o.id FROM moved o -- new
          UNION SELECT h.entity_id FROM sem_hits h) c -- new
    JOIN neotoma.word_postings p ON p.user_id = $1::uuid AND p.lexeme = (SELECT k.lexeme FROM posted_short k) -- new
                                AND p.entity_id = c.entity_id -- new
    WHERE (SELECT k.short FROM posted_short k) -- new
      AND p.workspace = ANY($21::text[]) -- ws:some -- new
    UNION ALL -- new
    (SELECT p.entity_id, p.workspace, p.entity_type -- new
     FROM neotoma.word_postings p -- new
     WHERE (SELECT k.short FROM posted_short k) -- new
       AND p.user_id = $1::uuid AND p.lexeme = (SELECT k.lexeme FROM posted_short k) -- new
       AND p.workspace = ANY($21::text[]) -- ws:some -- new
       AND p.entity_id NOT IN (SELECT c.entity_id FROM posted_names c) AND p.entity_id NOT IN (SELECT o.id FROM moved o) -- new
       AND p.entity_id NOT IN (SELECT h.entity_id FROM sem_hits h) -- new
       AND ($5 = 'true' OR p.entity_id NOT IN (SELECT d.id FROM neotoma.entities d -- new
                                               WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)) -- new
     ORDER BY p.entity_id LIMIT $7 + $8) -- new
    UNION ALL -- new
    -- (A word of several lexemes: each entity once.)
    SELECT p.entity_id, max(p.workspace), max(p.entity_type) -- new
    FROM weights w JOIN neotoma.word_postings p ON p.user_id = $1::uuid AND p.lexeme = ANY (w.lexemes) -- new
    WHERE w.df > 0 AND NOT w.pair AND cardinality(w.lexemes) > 1 -- new
      AND ($3::text IS NULL OR p.entity_type = $3) -- new
      AND p.workspace = ANY($21::text[]) -- ws:some -- new
    GROUP BY p.entity_id) p -- new
  LEFT JOIN posted_names c ON c.entity_id = p.entity_id -- new
  LEFT JOIN LATERAL (SELECT (length(s.name_trigrams) - length(ts_delete(s.name_trigrams, $2::text[])))::float8 -- new
                            / (cardinality($2::text[]) + length(ts_delete(s.name_trigrams, $2::text[]))) AS name_sim -- new
                     FROM neotoma.entity_snapshots s -- new
                     WHERE c.entity_id IS NOT NULL AND s.user_id = $1::uuid AND s.entity_id = c.entity_id OFFSET 0) n ON true -- new
  WHERE m.all_common AND m.all_posted AND $10 = 'true' -- new
  ),
-- Every observation's words (values since superseded too), by the GIN index
-- on neotoma._observation_vector(fields).
obs_hits AS (
  SELECT NULL::text AS entity_id, NULL::float4 AS obs_rank WHERE false
  UNION ALL SELECT o.entity_id, max(ts_rank_cd(neotoma._observation_vector(o.fields), q.text_query, 32))
  FROM neotoma.observations o, q
  WHERE $20 = 'true' AND o.user_id = $1::uuid AND neotoma._observation_vector(o.fields) OPERATOR(neotoma.@@) q.text_query
    AND neotoma._user_words(o.user_id, neotoma._observation_vector(o.fields)) OPERATOR(neotoma.@@) q.user_query -- new
    AND ($3::text IS NULL OR o.entity_type = $3)
  GROUP BY o.entity_id
  ),
-- The words of stored files (the start of a text file), by the GIN index on
-- files.search_vector: the entities observed from a matching file.
file_hits AS (
  SELECT NULL::text AS entity_id, NULL::float4 AS file_rank WHERE false
  UNION ALL SELECT o.entity_id, max(ts_rank_cd(f.search_vector, q.text_query, 32))
  FROM neotoma.files f, q, neotoma.observations o
  WHERE $20 = 'true' AND f.user_id = $1::uuid AND f.search_vector OPERATOR(neotoma.@@) q.text_query
    AND neotoma._user_words(f.user_id, f.search_vector) OPERATOR(neotoma.@@) q.user_query -- new
    AND o.user_id = f.user_id AND o.source_id = f.source_id AND ($3::text IS NULL OR o.entity_type = $3)
  GROUP BY o.entity_id
  ),
-- Names like a word no entity has (a typo, a name half remembered): the
-- $26 sharing most of its trigrams (the index of trigrams, as pg_trgm's GIN
-- index finds them), then their similarity to the whole query. (Names the
-- query's words found are compared in text_hits: a word every name has
-- would make the index read most of them.) A trigram in more than $25 names
-- is common, as a term is: the names are found by the word's rare trigrams
-- that some name has, and compared by those; so a typo reads at most $25 +
-- 1 index rows per common trigram, whatever the size of the memory
-- (reading every name with "  j" or "son" grew with it), and none for a
-- trigram neotoma.common_name_trigrams knows common. When it has none,
-- the names having a word one typo from it (a deletion variant in common,
-- sql/search.sql), those sharing the most variants first; failing those
-- (a word of three letters has none), by all its trigrams.
unknown AS (
  SELECT coalesce(array_agg(DISTINCT g.g), '{}') AS grams
  FROM weights w CROSS JOIN LATERAL unnest(neotoma._name_trigrams(w.word)) g(g)
  WHERE $11 = 'true' AND w.df = 0 AND NOT w.pair),
rare_grams AS (
  SELECT coalesce(array_agg(g.g) FILTER (WHERE d.n BETWEEN 1 AND $25::int), array_agg(g.g), '{}') AS grams,
         coalesce(bool_or(d.n BETWEEN 1 AND $25::int), false) AS some_rare
  FROM unknown u CROSS JOIN LATERAL unnest(u.grams) g(g)
  CROSS JOIN LATERAL (SELECT count(*) AS n FROM (
      SELECT FROM neotoma.entity_name_trigrams t WHERE t.user_id = $1::uuid AND t.trigram = g.g
        -- One known common is not read: as if in no name (neither is rare).
        AND NOT EXISTS (SELECT FROM neotoma.common_name_trigrams c -- new
                        WHERE c.user_id = $1::uuid AND c.trigram = g.g AND c.names > $25::int) -- new
      LIMIT $25::int + 1) x) d),
variant_hits AS (
  SELECT NULL::text AS entity_id, 0::bigint AS shared WHERE false
  UNION ALL SELECT t.entity_id, count(*) FROM ( -- new
      SELECT DISTINCT v.v FROM weights w CROSS JOIN LATERAL unnest(neotoma._name_variants(w.word)) v(v) -- new
      WHERE $11 = 'true' AND w.df = 0 AND NOT w.pair AND NOT (SELECT r.some_rare FROM rare_grams r)) v -- new
    CROSS JOIN LATERAL (SELECT t.entity_id FROM neotoma.entity_name_trigrams t -- new
                        WHERE t.user_id = $1::uuid AND t.trigram = v.v LIMIT $25::int + 1) t -- new
    GROUP BY t.entity_id -- new
  ),
name_hits AS (
  SELECT c.entity_id, (s.name_count - s.rest)::float8 / (cardinality($2::text[]) + s.rest) AS name_sim,
         s.workspace, s.entity_type
  FROM ((SELECT t.entity_id FROM neotoma.entity_name_trigrams t
         WHERE t.user_id = $1::uuid AND t.trigram = ANY ((SELECT r.grams FROM rare_grams r)::text[])
           AND NOT EXISTS (SELECT FROM variant_hits)
         GROUP BY t.entity_id
         HAVING count(*) >= (SELECT greatest(1, ceil($9::float8 * cardinality(r.grams))) FROM rare_grams r)
         -- The likest to the words first (their similarity, from the index alone).
         ORDER BY count(*)::float8 / ((SELECT cardinality(r.grams) FROM rare_grams r) + min(t.name_trigram_count) - count(*)) DESC,
                  t.entity_id
         LIMIT $26)
        UNION ALL
        (SELECT v.entity_id FROM variant_hits v ORDER BY v.shared DESC, v.entity_id LIMIT $26)) c
  CROSS JOIN LATERAL (SELECT s.workspace, s.entity_type, length(s.name_trigrams) AS name_count,
                             length(ts_delete(s.name_trigrams, $2::text[])) AS rest
                      FROM neotoma.entity_snapshots s
                      WHERE s.user_id = $1::uuid AND s.entity_id = c.entity_id
                        AND ($3::text IS NULL OR s.entity_type = $3) OFFSET 0) s),
type_hits AS (
  SELECT e.id AS entity_id, e.workspace, e.entity_type FROM neotoma.entities e
  WHERE $13::text IS NOT NULL AND e.user_id = $1::uuid AND e.entity_type = $13
    AND ($3::text IS NULL OR e.entity_type = $3)),
hits AS (
  SELECT h.entity_id, max(h.text_rank) AS text_rank, max(h.name_sim) AS name_sim, bool_or(h.by_type) AS by_type,
         max(h.sem_sim) AS sem_sim,
         -- Found by an observation's words only (not its snapshot's).
         bool_or(h.by_obs) AND NOT bool_or(h.by_text) AS by_obs,
         bool_or(h.by_file) AS by_file,
         -- Its workspace and type (an entity's, for ever), when a branch read its snapshot.
         max(h.workspace) AS workspace, max(h.entity_type) AS entity_type
  FROM (SELECT entity_id, text_rank, CASE WHEN name_sim >= $9::float8 THEN name_sim ELSE 0 END AS name_sim,
               false AS by_type, NULL::float8 AS sem_sim, false AS by_obs, true AS by_text, false AS by_file,
               workspace, entity_type
        FROM text_hits
        UNION ALL
        SELECT entity_id, obs_rank, 0, false, NULL, true, false, false, NULL, NULL FROM obs_hits
        UNION ALL
        SELECT entity_id, file_rank, 0, false, NULL, false, false, true, NULL, NULL FROM file_hits
        UNION ALL
        SELECT entity_id, 0, name_sim, false, NULL, false, false, false, workspace, entity_type FROM name_hits
        WHERE name_sim >= $9::float8
        UNION ALL
        SELECT entity_id, 0, 0, true, NULL, false, false, false, workspace, entity_type FROM type_hits
        UNION ALL
        SELECT entity_id, 0, 0, false, sem_sim, false, false, false, NULL, NULL FROM sem_hits WHERE sem_sim >= $15::float8) h
  GROUP BY h.entity_id),
-- Unless merged entities are asked for, one merged away is an alias of the
-- entity it went to: its match counts for that one.
resolved AS (
  SELECT CASE WHEN $4 = 'true' THEN h.entity_id ELSE coalesce(m.merged_into, h.entity_id) END AS id,
         max(greatest(0.6 * h.name_sim + 0.4 * h.text_rank, CASE WHEN h.by_type THEN 0.1 ELSE 0 END)) AS lex_score,
         max(h.sem_sim) AS sem_sim,
         max(h.name_sim) FILTER (WHERE m.id IS NULL OR $4 = 'true') AS name_sim,
         bool_or(m.id IS NOT NULL AND $4 <> 'true') AS by_alias,
         bool_or(h.by_type) AS by_type,
         bool_or(h.by_obs) AS by_obs,
         bool_or(h.by_file) AS by_file,
         max(h.workspace) FILTER (WHERE m.id IS NULL OR $4 = 'true') AS workspace,
         max(h.entity_type) FILTER (WHERE m.id IS NULL OR $4 = 'true') AS entity_type
  FROM hits h LEFT JOIN moved m ON m.id = h.entity_id
  WHERE $12 = 'true' OR $4 = 'true' OR m.id IS NULL
  GROUP BY 1),
eligible AS (
  SELECT r.id, r.lex_score, r.sem_sim, r.name_sim, r.by_alias, r.by_type, r.by_obs, r.by_file
  FROM resolved r
  WHERE ($4 = 'true' OR r.id NOT IN (SELECT m.id FROM moved m))
    AND ($5 = 'true' OR r.id NOT IN (SELECT d.id FROM neotoma.entities d
                                     WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL))
    -- The workspace and type of what answers (a hit on an entity
    -- reclassified into another type counts for that type): its row's, when
    -- no hit on itself read them (an alias's target, a semantic hit).
    AND CASE WHEN r.workspace IS NOT NULL
             THEN r.workspace = ANY($21::text[]) AND ($3::text IS NULL OR r.entity_type = $3)
             ELSE EXISTS (SELECT FROM neotoma.entities e
                          WHERE e.user_id = $1::uuid AND e.id = r.id AND e.workspace = ANY($21::text[])
                            AND ($3::text IS NULL OR e.entity_type = $3)) END),
-- posted_short's total: the entities having the word that answer (not
-- merged away, not deleted unless asked), and those that entities
-- merged away count for when they answer and have not the word themselves.
posted_total AS ( -- new
  SELECT (SELECT count(*) FROM neotoma.word_postings p -- new
          WHERE p.user_id = $1::uuid AND p.lexeme = k.lexeme -- new
            AND p.workspace = ANY($21::text[]) -- ws:some -- new
            AND p.entity_id NOT IN (SELECT o.id FROM moved o) -- new
            AND ($5 = 'true' OR p.entity_id NOT IN (SELECT d.id FROM neotoma.entities d -- new
                                                    WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL))) -- new
       + (SELECT count(DISTINCT o.merged_into) FROM moved o -- new
          JOIN neotoma.word_postings p ON p.user_id = $1::uuid AND p.lexeme = k.lexeme AND p.entity_id = o.id -- new
          JOIN neotoma.entities t ON t.user_id = $1::uuid AND t.id = o.merged_into -- new
          WHERE t.merged_into IS NULL AND ($5 = 'true' OR t.deleted_at IS NULL) AND t.workspace = ANY($21::text[]) -- new
            AND p.workspace = ANY($21::text[]) -- ws:some -- new
            AND NOT EXISTS (SELECT FROM neotoma.word_postings q -- new
                            WHERE q.user_id = $1::uuid AND q.lexeme = k.lexeme AND q.entity_id = t.id -- new
                              AND q.workspace = ANY($21::text[]) -- ws:some -- new
                            )) AS n -- new
  FROM posted_short k WHERE k.short), -- new
-- posted_short in hybrid search: for each entity of the page's candidates
-- that only its word ranks (lexical score 0.4), how many entities having
-- the word that are not among the candidates come before it by id (its
-- lexical place counts them too). One pass over the postings in id order.
posted_gaps AS MATERIALIZED ( -- new
  SELECT u.id, u.gaps FROM ( -- new
    SELECT u.id, u.gap, sum(u.gap) OVER (ORDER BY u.id ROWS UNBOUNDED PRECEDING) AS gaps -- new
    FROM (SELECT p.entity_id AS id, 1 AS gap FROM neotoma.word_postings p, posted_short k -- new
          WHERE k.short AND $16 = 'hybrid' AND p.user_id = $1::uuid AND p.lexeme = k.lexeme -- new
            AND p.workspace = ANY($21::text[]) -- ws:some -- new
            AND p.entity_id NOT IN (SELECT g.id FROM eligible g) AND p.entity_id NOT IN (SELECT o.id FROM moved o) -- new
            AND ($5 = 'true' OR p.entity_id NOT IN (SELECT d.id FROM neotoma.entities d -- new
                                                    WHERE d.user_id = $1::uuid AND d.deleted_at IS NOT NULL)) -- new
          UNION ALL -- new
          SELECT g.id, 0 FROM eligible g, posted_short k WHERE k.short AND $16 = 'hybrid' AND g.lex_score > 0 AND g.lex_score <= 0.4) u) u -- new
  WHERE u.gap = 0), -- new
-- Each ranking's places (ties by id), fused by the mode: hybrid's only
-- (actions/search.rs keeps the lines of the mode that answers).
places AS (
  SELECT g.*,
         CASE WHEN g.lex_score > 0 THEN row_number() OVER (ORDER BY g.lex_score > 0 DESC, g.lex_score DESC, g.id) -- mode:hybrid
           + coalesce((SELECT c.gaps FROM posted_gaps c WHERE c.id = g.id), 0) -- mode:hybrid -- new
           END AS lex_place, -- mode:hybrid
         CASE WHEN g.sem_sim IS NOT NULL THEN row_number() OVER (ORDER BY g.sem_sim IS NOT NULL DESC, g.sem_sim DESC, g.id) END AS sem_place -- mode:hybrid
         NULL::bigint AS lex_place, NULL::bigint AS sem_place -- mode:single
  FROM eligible g),
ranked AS (
  SELECT p.*,
         CASE $16
           WHEN 'lexical' THEN p.lex_score
           WHEN 'semantic' THEN p.sem_sim
           ELSE (coalesce(p.lex_score / ($17::int + p.lex_place), 0) + coalesce(1.0 / ($17::int + p.sem_place), 0))
                * ($17::int + 1) / 2.0
         END::float8 AS score
  FROM places p),
-- The page's entity rows, read for the page alone.
page AS (
  SELECT p.*, e.entity_type, e.canonical_name, e.merged_into, e.deleted_at, e.deleted_reason, e.workspace
  FROM (SELECT * FROM ranked ORDER BY score DESC, id LIMIT $7 OFFSET $8) p
  CROSS JOIN LATERAL (SELECT e.entity_type, e.canonical_name, e.merged_into, e.deleted_at, e.deleted_reason, e.workspace
                      FROM neotoma.entities e WHERE e.user_id = $1::uuid AND e.id = p.id OFFSET 0) e)
SELECT json_build_object(
  'entities', coalesce((
    SELECT json_agg(json_build_object(
             'id', page.id, 'entity_type', page.entity_type, 'canonical_name', page.canonical_name,
             'observation_count', s.observation_count,
             'last_observation_at', neotoma._iso(s.last_observation_at),
             'snapshot', CASE WHEN $6 = 'true' THEN s.snapshot END,
             'merged_into', page.merged_into,
             'deleted_at', neotoma._iso(page.deleted_at), 'deleted_reason', page.deleted_reason,
             'workspace', page.workspace,
             'relevance_score', round(page.score::numeric, 6),
             'matched_fields', m.fields,
             'semantic_similarity', round(page.sem_sim::numeric, 6))
           ORDER BY page.score DESC, page.id)
    FROM page
    JOIN LATERAL (SELECT s.observation_count, s.last_observation_at, s.snapshot FROM neotoma.entity_snapshots s
                  WHERE s.user_id = $1::uuid AND s.entity_id = page.id OFFSET 0) s ON true
    -- The fields whose own text matches (each value read as the generated
    -- column search_vector reads the snapshot: keep sql/search.sql in step);
    -- the name field when the name did.
    CROSS JOIN LATERAL (
      SELECT coalesce(json_agg(f.field ORDER BY f.field), '[]') AS fields FROM (
        SELECT kv.key AS field FROM jsonb_each(s.snapshot) kv, q
        WHERE $10 = 'true' AND (jsonb_to_tsvector('pg_catalog.simple', kv.value, '["string", "numeric"]')
               || jsonb_to_tsvector('pg_catalog.english', kv.value, '["string"]')
               || array_to_tsvector(neotoma._text_grams(kv.value::text))
               ) OPERATOR(neotoma.@@) q.text_query
        UNION
        SELECT CASE WHEN s.snapshot ? 'name' THEN 'name' ELSE 'title' END
        WHERE page.name_sim >= $9::float8
        UNION
        SELECT 'alias' WHERE page.by_alias
        UNION
        SELECT 'entity_type' WHERE page.by_type
        UNION
        SELECT 'observations' WHERE page.by_obs
        UNION
        SELECT 'files' WHERE page.by_file) f) m), '[]'),
  'total', (SELECT count(*) FROM ranked
            WHERE NOT (SELECT k.short FROM posted_short k) -- new
               OR lex_score = 0 -- new
            )
            + coalesce((SELECT t.n FROM posted_total t), 0) -- new
            ,
  -- The user's entities (of the type) without an embedding of their text
  -- by a remote provider's model (the server's embeds as it stores: 0,
  -- not a count over every snapshot).
  'pending_embeddings', CASE WHEN $14::real[] IS NOT NULL AND $18 IS DISTINCT FROM neotoma._embedding_model() THEN (
    SELECT count(*) FROM neotoma.entity_snapshots s
    WHERE s.user_id = $1::uuid AND ($3::text IS NULL OR s.entity_type = $3)
      AND s.workspace = ANY($21::text[]) -- ws:some
      AND NOT EXISTS (SELECT FROM neotoma.entity_embeddings v
                      WHERE v.user_id = $1::uuid AND v.entity_id = s.entity_id AND v.model = $18))
    WHEN $14::real[] IS NOT NULL THEN 0 END,
  'excluded_merged', $4 <> 'true', 'limit', $7, 'offset', $8)::text
