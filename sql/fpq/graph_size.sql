-- Sizes of the id spaces of one KG: ids are dense from 0, so max(id) + 1 entities and relations.
SELECT
    (SELECT coalesce(max(id) + 1, 0) FROM entities) AS n_entities,
    (SELECT coalesce(max(id) + 1, 0) FROM relations) AS n_relations
