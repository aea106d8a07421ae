-- The relations of the triples subject -> relation -> false object, for each (subject, false object) pair of the
-- registered table _fpq_premises: a false premise the KG already states (by id). Only matching triples come back,
-- so the cost is one hash join of the pairs against the triples, however many edges the subjects have. With
-- premise_ids_in, the two directions; two queries, not one UNION ALL: DuckDB 1.5.6 never returned the UNION ALL of
-- a subject's neighbours in both directions on a 1M-triple KG. The false object must be an entity.
SELECT p.subject, p.false_object, t.relation
FROM _fpq_premises AS p
JOIN triples AS t ON t.head = p.subject AND t.tail = p.false_object
JOIN entities AS e ON e.id = t.tail
