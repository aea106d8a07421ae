-- A readable label from a key when the data gives none: an IRI's percent-decoded local name, else the key;
-- underscores become spaces in both (the key itself is kept unchanged in the key column).
CREATE OR REPLACE TEMP MACRO kg_readable(k) AS
    coalesce(nullif(trim(replace(
        CASE WHEN regexp_matches(k, '^[A-Za-z][A-Za-z0-9+.-]*:') AND contains(k, '/')
             THEN url_decode(regexp_extract(rtrim(k, '/#'), '([^/#:]*)$', 1))
             ELSE k END,
        '_', ' ')), ''), k)
