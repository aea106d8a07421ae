-- Every entity one of the $subjects links to (subject -> relation -> neighbour), with the relation and the
-- neighbour's label: what a false premise about the subject must not name (an object the KG already links it to).
-- With subject_neighbours_in, the two directions; two queries, not one UNION ALL: DuckDB 1.5.6 never returns the
-- UNION ALL of the two (with the labels) on a KG of 1M triples and a few hundred subjects (idle, not busy).
SELECT s.subject, t.relation, t.tail AS neighbour, lower(trim(e.label)) AS label
FROM unnest($subjects::BIGINT[]) AS s(subject)
JOIN triples AS t ON t.head = s.subject
JOIN entities AS e ON e.id = t.tail
