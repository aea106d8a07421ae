-- Every subject is an entity, also one that only has literals, types or labels. The subjects of the triples are
-- keys of the KG already (_st_triples), so only those of the other statements are collected here.
INSERT INTO _st_entities
SELECT DISTINCT s FROM _st_rdf WHERE o IS NULL OR p = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type'
