-- One pair per first entity, for spread: for each head of a type in $head_types joined by a triple to a tail of a
-- type in $tail_types, its pair that comes first in a seeded pseudo-random order (md5 of seed, head and tail); the
-- $limit heads whose first pair comes first, in that order, with labels. The same pairs, in the same order, as
-- walking every pair in md5 order and keeping a head's first one, without reading every pair out of the database.
WITH pairs AS (
    SELECT DISTINCT head, tail
    FROM triples
    WHERE head <> tail
      AND head IN (SELECT entity FROM entity_types WHERE list_contains($head_types, type))
      AND tail IN (SELECT entity FROM entity_types WHERE list_contains($tail_types, type))
),
firsts AS (
    SELECT head, arg_min(tail, ord) AS tail, min(ord) AS ord
    FROM (SELECT head, tail, md5(concat($seed, ':', head, ':', tail)) AS ord FROM pairs)
    GROUP BY head
    ORDER BY ord, head
    LIMIT $limit
)
SELECT f.head, h.label AS head_label, f.tail, t.label AS tail_label
FROM firsts f
JOIN entities h ON h.id = f.head
JOIN entities t ON t.id = f.tail
ORDER BY f.ord, f.head
