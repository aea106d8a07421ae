-- Strict N-Triples: the distinct IRIs ('iri') and language tags ('lang') of the plain rows of _nt_fast, to be
-- validated once each rather than once per line (a dump repeats its IRIs).
CREATE OR REPLACE TEMP TABLE _nt_terms AS
SELECT 'iri' AS kind, v FROM (
    SELECT s AS v FROM _nt_fast WHERE plain AND NOT starts_with(s, '_:')
    UNION SELECT p FROM _nt_fast WHERE plain
    UNION SELECT o FROM _nt_fast WHERE plain AND o IS NOT NULL AND NOT starts_with(o, '_:')
    UNION SELECT dt FROM _nt_fast WHERE plain AND dt IS NOT NULL
)
UNION ALL
SELECT DISTINCT 'lang', lang FROM _nt_fast WHERE plain AND lang IS NOT NULL
