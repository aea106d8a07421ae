-- Every entity n with n -> relation -> subject, for each (subject, relation) pair of the registered table
-- _fpq_premise_relations: the other direction of premise_objects_out.
SELECT q.subject, q.relation, t.head AS object
FROM _fpq_premise_relations AS q
JOIN triples AS t ON t.tail = q.subject AND t.relation = q.relation
JOIN entities AS e ON e.id = t.head
