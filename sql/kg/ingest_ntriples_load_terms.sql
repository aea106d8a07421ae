-- Strict N-Triples, once a load has its distinct entity keys (_st_keys): its distinct IRIs ('iri': entities other
-- than blank nodes, predicates, rdf:type classes, datatypes) and language tags ('lang'), to be checked by
-- ingest_ntriples_strict_check. Statements parsed by pyoxigraph are among them; they pass again.
CREATE OR REPLACE TEMP TABLE _nt_terms AS
SELECT 'iri' AS kind, v FROM (
    SELECT key AS v FROM _st_keys WHERE NOT starts_with(key, '_:')
    UNION SELECT DISTINCT p FROM _st_rdf
    UNION SELECT DISTINCT type_key FROM _st_types WHERE type IS NULL AND NOT starts_with(type_key, '_:')
    UNION SELECT DISTINCT dt FROM _st_rdf WHERE dt IS NOT NULL
)
UNION ALL
SELECT DISTINCT 'lang', lang FROM _st_rdf WHERE lang IS NOT NULL
