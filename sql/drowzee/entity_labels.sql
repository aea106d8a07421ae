-- Labels of the entities whose ids are in $ids.
SELECT id, key, label FROM entities WHERE id IN (SELECT unnest($ids::BIGINT[])) ORDER BY id
