-- Distinct statements between two resources, other than rdf:type, are the triples of the KG.
INSERT INTO _st_triples
SELECT DISTINCT s, p, o, NULL, NULL FROM _st_rdf WHERE o IS NOT NULL AND p <> 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
