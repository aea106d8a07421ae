-- Dated facts of a KG with labels, as the source gives them: one row per interval; end_year NULL with ongoing = the
-- source's end year 3000, end_year NULL without it = no end given (the suite reads both by its settings).
SELECT f.head, f.relation, f.tail, f.start_year, f.end_year, f.ongoing,
       h.label AS head_label, r.label AS relation_label, t.label AS tail_label, r.key AS relation_key
FROM temporal_facts f
JOIN entities h ON h.id = f.head
JOIN relations r ON r.id = f.relation
LEFT JOIN entities t ON t.id = f.tail
ORDER BY f.head, f.relation, f.tail, f.start_year
