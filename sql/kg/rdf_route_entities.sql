-- Every subject is an entity, also one that only has literals, types or labels.
INSERT INTO _st_entities
SELECT DISTINCT s FROM _st_rdf
