-- The relations of the triples subject -> relation -> n where entity n's name (its label, trimmed and lower-cased)
-- is the pair's name (the false object's, normalised by the caller), for each (subject, false object, name) of the
-- registered table _fpq_premises: a false premise the KG states about an entity of the same name ("United
-- Kingdom" twice). The pairs first meet the entities of their name, then those (subject, n) pairs the triples:
-- only matching triples come back. premise_names_in is the other direction.
WITH named AS (
    SELECT p.subject, p.false_object, e.id AS neighbour
    FROM _fpq_premises AS p
    JOIN entities AS e ON lower(trim(e.label)) = p.name
)
SELECT n.subject, n.false_object, t.relation
FROM named AS n
JOIN triples AS t ON t.head = n.subject AND t.tail = n.neighbour
