-- The relations of the triples n -> relation -> subject where entity n has the pair's name, for each (subject,
-- false object, name) of the registered table _fpq_premises: the other direction of premise_names_out.
WITH named AS (
    SELECT p.subject, p.false_object, e.id AS neighbour
    FROM _fpq_premises AS p
    JOIN entities AS e ON lower(trim(e.label)) = p.name
)
SELECT n.subject, n.false_object, t.relation
FROM named AS n
JOIN triples AS t ON t.tail = n.subject AND t.head = n.neighbour
