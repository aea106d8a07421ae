-- A readable label from a key when the data gives none: an IRI's percent-decoded local name, a path of three or
-- more segments (a Freebase relation such as /people/person/place_of_birth) its last segment, a key after YAGO's
-- language prefix (de/Adam_Kensy: an entity of the German Wikipedia) the name after it, else the key;
-- underscores become spaces (the key itself is kept unchanged in the key column). A two-segment path (a Freebase
-- mid, /m/0d05w3) stays as it is: it is an id, not a name.
CREATE OR REPLACE TEMP MACRO kg_readable(k) AS
    coalesce(nullif(trim(replace(
        CASE WHEN regexp_matches(k, '^[A-Za-z][A-Za-z0-9+.-]*:') AND contains(k, '/')
             THEN url_decode(regexp_extract(rtrim(k, '/#'), '([^/#:]*)$', 1))
             WHEN regexp_matches(k, '^/[^/]+/[^/]+/[^/]')
             THEN regexp_extract(rtrim(k, '/'), '([^/]*)$', 1)
             WHEN regexp_matches(k, '^[a-z]{2,3}/[^/]+$')
             THEN regexp_extract(k, '^[a-z]{2,3}/(.*)$', 1)
             ELSE k END,
        '_', ' ')), ''), k)
