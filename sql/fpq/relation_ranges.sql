-- The range of each relation as type inference names it (see infer_types.sql): a Freebase-style key's last
-- component (/film/film/genre -> genre), else "object of <key>". KG-FPQ's typed edits of an inferred KG draw their
-- false objects from the range of the triple's relation, not from every type the true object has.
SELECT
    id AS relation,
    CASE WHEN starts_with(key, '/')
        THEN list_filter(string_split(key, '/'), x -> x <> '')[-1]
        ELSE 'object of ' || key END AS type_key
FROM relations
