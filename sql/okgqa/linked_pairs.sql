-- Pairs (head, tail) joined by a triple whose head has a type in $head_types and tail a type in $tail_types, with
-- labels, in a seeded pseudo-random order; one row per pair.
SELECT DISTINCT tr.head, h.label AS head_label, tr.tail, t.label AS tail_label,
       md5(concat($seed, ':', tr.head, ':', tr.tail)) AS ord
FROM triples tr
JOIN entities h ON h.id = tr.head
JOIN entities t ON t.id = tr.tail
WHERE tr.head <> tr.tail
  AND tr.head IN (SELECT entity FROM entity_types WHERE list_contains($head_types, type))
  AND tr.tail IN (SELECT entity FROM entity_types WHERE list_contains($tail_types, type))
ORDER BY ord, tr.head, tr.tail
