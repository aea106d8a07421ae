-- Every entity joined to one of the $subjects by a triple in either direction, with the relation and both labels:
-- what a false premise about the subject must not name (an object the KG already links it to).
SELECT s.subject, t.relation, t.tail AS neighbour, lower(trim(e.label)) AS label
FROM unnest($subjects::BIGINT[]) AS s(subject)
JOIN triples AS t ON t.head = s.subject
JOIN entities AS e ON e.id = t.tail
UNION ALL
SELECT s.subject, t.relation, t.head, lower(trim(e.label))
FROM unnest($subjects::BIGINT[]) AS s(subject)
JOIN triples AS t ON t.tail = s.subject
JOIN entities AS e ON e.id = t.head
