-- The types of the entities in $ids.
SELECT entity, type FROM entity_types WHERE entity IN (SELECT unnest($ids)) ORDER BY entity, type
