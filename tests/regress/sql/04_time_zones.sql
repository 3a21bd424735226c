-- A timestamp without a zone means UTC everywhere, whatever the session's
-- TimeZone: the time-sensitive cases (observed_at from a naive
-- extracted_at, snapshots `at` a naive time, timeline filters by date and
-- by naive date-time, the timeline resources, the entity_fields view) run
-- under America/New_York and under Asia/Kolkata, each for its own user, and
-- must answer the same. (pg_regress itself runs in PST8PDT.)
\ir include/setup.sql
BEGIN;
SET ROLE neotoma_regress_agent;

CREATE TEMP TABLE tz_answers (zone text, step text, answer jsonb);

CREATE FUNCTION pg_temp.time_cases(zone text, usr text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  stored jsonb;
  inv text;
  note text;
BEGIN
  PERFORM set_config('TimeZone', zone, true);
  PERFORM set_config('neotoma.user_id', usr, true);
  stored := neotoma.store(jsonb_build_object(
    'entities', jsonb_build_array(
      jsonb_build_object('entity_type', 'invoice', 'invoice_number', 'TZ-1', 'vendor_name', 'V',
                         'invoice_date', '2024-05-01', 'date_due', '2024-05-31T23:30:00'),
      jsonb_build_object('entity_type', 'note', 'title', 'late', 'content', 'written at night')),
    'provenance', jsonb_build_object('extracted_at', '2024-05-02T23:30:00', 'extractor_version', 'tz/1')));
  inv := stored->'entities'->0->>'entity_id';
  note := stored->'entities'->1->>'entity_id';
  INSERT INTO tz_answers VALUES
    (zone, 'observed_at of a naive extracted_at',
     (SELECT jsonb_agg(o->'observed_at') FROM jsonb_array_elements(
        neotoma.list_observations(jsonb_build_object('entity_id', note))->'observations') o)),
    (zone, 'snapshot at a naive time before the observation',
     neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', note, 'at', '2024-05-02T23:29:59'))
       -> 'observation_count'),
    (zone, 'snapshot at a naive time after it',
     neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', note, 'at', '2024-05-02T23:30:00'))
       -> 'snapshot'),
    (zone, 'snapshot at a date (midnight UTC)',
     neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', note, 'at', '2024-05-02'))
       -> 'observation_count'),
    (zone, 'events on 2024-05-01 by date',
     (SELECT jsonb_agg(jsonb_build_array(e->'event_type', e->'event_timestamp')) FROM jsonb_array_elements(
        neotoma.list_timeline_events(jsonb_build_object('after_date', '2024-05-01', 'before_date', '2024-05-02'))
          -> 'events') e)),
    (zone, 'events from a naive date-time',
     neotoma.list_timeline_events(jsonb_build_object('after_date', '2024-05-31T23:00:00')) -> 'total'),
    (zone, 'events before a naive date-time',
     neotoma.list_timeline_events(jsonb_build_object('before_date', '2024-05-31T23:30:00')) -> 'total'),
    (zone, 'timeline resource of May',
     neotoma.read_resource(jsonb_build_object('uri', 'neotoma://timeline/2024-05')) -> 'total'),
    (zone, 'timeline resources listed',
     (SELECT jsonb_agg(r->'uri') FROM jsonb_array_elements(
        neotoma.list_resources('{}')->'resources') r WHERE r->>'uri' LIKE 'neotoma://timeline/%')),
    (zone, 'entity_fields observed_at is the UTC instant',
     (SELECT to_jsonb(bool_and(observed_at = '2024-05-02 23:30:00+00'))
      FROM neotoma.entity_fields WHERE entity_id IN (inv, note))),
    (zone, 'date_due as stored and as its event',
     jsonb_build_array(
       neotoma.retrieve_entity_snapshot(jsonb_build_object('entity_id', inv))->'snapshot'->'date_due',
       (SELECT e->'event_timestamp' FROM jsonb_array_elements(
          neotoma.list_timeline_events(jsonb_build_object('entity_id', inv, 'event_type', 'InvoiceDue'))
            -> 'events') e)));
END $$;

SELECT pg_temp.time_cases('America/New_York', 'a1000000-0000-0000-0000-0000000000a1');
SELECT pg_temp.time_cases('Asia/Kolkata', 'a2000000-0000-0000-0000-0000000000a2');

-- The answers in New York, and whether Kolkata's are the same.
SELECT n.step, n.answer, n.answer = k.answer AS same_in_kolkata
FROM tz_answers n JOIN tz_answers k ON k.step = n.step AND k.zone = 'Asia/Kolkata'
WHERE n.zone = 'America/New_York'
ORDER BY n.step;

ROLLBACK;
