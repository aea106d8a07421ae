-- Fills of a one- or two-entity template over entities of the types in $types that occur in a triple, the first
-- $limit in a seeded order. An entity of several of the types joins the pool of the first type by name. Each
-- type's pool is in md5 order of seed and entity id; $pairs = false: single entities, ordered by the first 16 hex
-- digits of the SHA-256 of the JSON [seed, id] (the item's content id); $pairs = true: the pool's entities taken
-- two by two in pool order (an odd last one is left out), ordered by the content id of [seed, a, b]. Ties of the
-- 16 digits keep pool order (type, then position).
WITH typed AS (
    SELECT min(t.type) AS type, e.id, e.label
    FROM entity_types t
    JOIN entities e ON e.id = t.entity
    WHERE list_contains($types, t.type)
      AND e.id IN (SELECT head FROM triples UNION SELECT tail FROM triples)
    GROUP BY e.id, e.label
),
pooled AS (
    SELECT type, id, label,
           row_number() OVER pool - 1 AS pos,
           lead(id) OVER pool AS id_b,
           lead(label) OVER pool AS label_b
    FROM typed
    WINDOW pool AS (PARTITION BY type ORDER BY md5(concat($seed, ':', id)), id)
),
fills AS (
    SELECT * FROM pooled WHERE NOT $pairs OR (pos % 2 = 0 AND id_b IS NOT NULL)
)
SELECT id, label, id_b, label_b  -- the b columns are read only for pairs
FROM fills
ORDER BY left(sha256(CASE WHEN $pairs THEN concat('[', $seed, ', ', id, ', ', id_b, ']')
                          ELSE concat('[', $seed, ', ', id, ']') END), 16), type, pos
LIMIT $limit
