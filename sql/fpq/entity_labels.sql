-- Labels of the entity ids in the list $ids.
SELECT e.id, e.label FROM entities AS e JOIN (SELECT unnest($ids) AS id) AS wanted ON e.id = wanted.id
