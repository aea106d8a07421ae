-- The entities n whose name (label, trimmed and lower-cased) is the pair's name (the false object's, normalised by
-- the caller), for each (subject, false object, name) of the registered table _fpq_premises: the candidates of a
-- false premise the KG states about an entity of the same name ("United Kingdom" twice). premise_names_out and
-- premise_names_in then join these (subject, n) pairs against the triples, so only matching triples come back.
SELECT p.subject, p.false_object, e.id AS neighbour
FROM _fpq_premises AS p
JOIN entities AS e ON lower(trim(e.label)) = p.name
