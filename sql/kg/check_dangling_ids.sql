-- Rows of the current KG schema that point at an entity or relation id that does not exist, per table.
SELECT
    (SELECT count(*) FROM triples t WHERE t.head NOT IN (SELECT id FROM entities) OR t.tail NOT IN (SELECT id FROM entities)
        OR t.relation NOT IN (SELECT id FROM relations)) AS triples,
    (SELECT count(*) FROM entity_types x WHERE x.entity NOT IN (SELECT id FROM entities)) AS entity_types,
    (SELECT count(*) FROM literals l WHERE l.entity NOT IN (SELECT id FROM entities) OR l.relation NOT IN (SELECT id FROM relations)) AS literals,
    (SELECT count(*) FROM temporal_facts f WHERE f.head NOT IN (SELECT id FROM entities) OR f.relation NOT IN (SELECT id FROM relations)
        OR (f.tail IS NOT NULL AND f.tail NOT IN (SELECT id FROM entities))) AS temporal_facts
