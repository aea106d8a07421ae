-- Dated facts of a KG as MTL events: one row per interval with labels; an ongoing fact lasts to $ongoing_end, a fact
-- with an unknown start or end is left out.
SELECT f.head, f.relation, f.tail, f.start_year,
       CASE WHEN f.ongoing THEN greatest($ongoing_end, f.start_year) ELSE f.end_year END AS end_year,
       h.label AS head_label, r.label AS relation_label, t.label AS tail_label, r.key AS relation_key
FROM temporal_facts f
JOIN entities h ON h.id = f.head
JOIN relations r ON r.id = f.relation
LEFT JOIN entities t ON t.id = f.tail
WHERE f.start_year IS NOT NULL AND (f.end_year IS NOT NULL OR f.ongoing)
ORDER BY f.head, f.relation, f.tail, f.start_year
