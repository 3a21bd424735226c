-- 48 notes on six subjects (eight of each), for the session's user: what
-- the tests of semantic search rank. Answers how many were stored.
SELECT count(*) AS stored FROM jsonb_array_elements(neotoma.store(jsonb_build_object('entities', (
  SELECT jsonb_agg(jsonb_build_object('entity_type', 'note', 'title', s.subject || ' ' || i,
                                      'content', s.words || ' number ' || i) ORDER BY s.subject, i)
  FROM unnest(ARRAY['Cooking', 'Sailing', 'Taxes', 'Garden', 'Music', 'Hiking'],
              ARRAY['pasta sauce garlic onions recipe dinner', 'boat wind harbour sails anchor',
                    'tax return deductions invoice accountant', 'tomatoes basil soil seeds greenhouse',
                    'piano concert violin orchestra symphony', 'mountain trail boots summit backpack']) s(subject, words),
       generate_series(1, 8) i)))->'entities');
