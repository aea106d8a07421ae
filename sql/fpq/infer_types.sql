-- Entity types inferred from relation keys, for KGs without types (FB15k-237). A Freebase-style key
-- /domain/type/property[./cvt_type/property] gives its heads the type just before the first property (the
-- Freebase type: /film/film/genre -> film, /base/popstra/celebrity/dated -> celebrity) and its tails the last
-- component (genre). Any other key r gives the types "subject of r" and "object of r". Only new rows are inserted.
INSERT INTO entity_types (entity, type, type_key)
WITH rel_types AS (
    SELECT
        id,
        CASE WHEN starts_with(key, '/')
            THEN list_filter(string_split(split_part(key, '.', 1), '/'), x -> x <> '')[-2]
            ELSE 'subject of ' || key END AS head_key,
        CASE WHEN starts_with(key, '/')
            THEN list_filter(string_split(key, '/'), x -> x <> '')[-1]
            ELSE 'object of ' || key END AS tail_key,
        CASE WHEN starts_with(key, '/') THEN NULL ELSE 'subject of ' || label END AS head_label,
        CASE WHEN starts_with(key, '/') THEN NULL ELSE 'object of ' || label END AS tail_label
    FROM relations
),
inferred AS (
    SELECT t.head AS entity, coalesce(rt.head_label, replace(rt.head_key, '_', ' ')) AS type, rt.head_key AS type_key
    FROM triples AS t JOIN rel_types AS rt ON rt.id = t.relation
    WHERE rt.head_key IS NOT NULL AND rt.head_key <> ''
    UNION
    SELECT t.tail, coalesce(rt.tail_label, replace(rt.tail_key, '_', ' ')), rt.tail_key
    FROM triples AS t JOIN rel_types AS rt ON rt.id = t.relation
    WHERE rt.tail_key IS NOT NULL AND rt.tail_key <> ''
)
SELECT DISTINCT i.entity, i.type, i.type_key
FROM inferred AS i
WHERE NOT EXISTS (SELECT 1 FROM entity_types AS et WHERE et.entity = i.entity AND et.type_key = i.type_key)
ORDER BY i.entity, i.type_key
