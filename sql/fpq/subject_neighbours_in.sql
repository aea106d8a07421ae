-- Every entity that links to one of the $subjects (neighbour -> relation -> subject), with the relation and the
-- neighbour's label: the other direction of subject_neighbours_out.
SELECT s.subject, t.relation, t.head AS neighbour, lower(trim(e.label)) AS label
FROM unnest($subjects::BIGINT[]) AS s(subject)
JOIN triples AS t ON t.tail = s.subject
JOIN entities AS e ON e.id = t.head
