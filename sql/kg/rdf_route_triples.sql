-- Statements between two resources, other than rdf:type, are the triples of the KG.
INSERT INTO _st_triples
SELECT s, p, o, NULL, NULL FROM _rdf_ranked WHERE o IS NOT NULL AND p <> 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
