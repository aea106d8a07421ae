-- Distinct RDF literal statements, each ranked as a label candidate: rdfs:label literals in the wanted language
-- ($want) rank 0, without a language 1, in a regional variant of it 2; other languages and other statements get NULL.
CREATE OR REPLACE TEMP TABLE _rdf_ranked AS
SELECT *, CASE
        WHEN p <> 'http://www.w3.org/2000/01/rdf-schema#label' THEN NULL
        WHEN lang = $want THEN 0
        WHEN lang IS NULL THEN 1
        WHEN split_part(lang, '-', 1) = $want THEN 2
    END AS rank
FROM (SELECT DISTINCT s, p, lit, lang, dt FROM _st_rdf WHERE lit IS NOT NULL)
