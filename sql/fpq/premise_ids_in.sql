-- The relations of the triples false object -> relation -> subject, for each (subject, false object) pair of the
-- registered table _fpq_premises: the other direction of premise_ids_out.
SELECT p.subject, p.false_object, t.relation
FROM _fpq_premises AS p
JOIN triples AS t ON t.tail = p.subject AND t.head = p.false_object
JOIN entities AS e ON e.id = t.head
